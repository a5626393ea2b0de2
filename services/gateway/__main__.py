"""`python -m services.gateway`: serve on MNEMO_HOST:MNEMO_PORT."""

from services.gateway.main import run

run()
