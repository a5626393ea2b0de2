"""Domain model: topics, groups, pipelines, inputs, memories and runs."""
