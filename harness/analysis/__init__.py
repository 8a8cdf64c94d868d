"""Stage 6, reading results: statistics with confidence intervals and paired tests (`stats`), the report with its
figures (`report`, `figures`), and the CI gate on success rates (`gate`)."""
