"""`python -m services.extractor`: run the extractor until SIGTERM."""

from mnemo.kafka.worker import run_service
from services.extractor.app import create_app

run_service(create_app)
