"""The transformer stage service: batches -> transform / transform_with_context -> next topic."""
