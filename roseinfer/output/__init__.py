"""From token ids to what clients read: detokenizer, stop strings, request state."""
