"""The gateway service: the Engram v1 REST API in front of the mnemo engine."""
