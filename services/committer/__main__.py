"""`python -m services.committer`: run the committer until SIGTERM."""

from mnemo.kafka.worker import run_service
from services.committer.app import create_app

run_service(create_app)
