"""Stage 6, reading results: statistics with confidence intervals and paired tests (`stats`), the report's
tables, words and figures (`tables`, `prose`, `figures`) put together by `report`, and the CI gate on success
rates (`gate`)."""
