"""What one run leaves behind, typed once for every room: its steps, LM calls, tool and probe calls, the error
that ended it, the closed vocabularies naming errors, and the trajectory file format that stores them."""
