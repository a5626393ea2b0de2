"""`python -m services.buffer`: run the buffer service until SIGTERM."""

from mnemo.kafka.worker import run_service
from services.buffer.app import create_app

run_service(create_app)
