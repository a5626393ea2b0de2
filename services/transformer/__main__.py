"""`python -m services.transformer`: run the transformer until SIGTERM."""

from mnemo.kafka.worker import run_service
from services.transformer.app import create_app

run_service(create_app)
