"""The whole text of the stream pane's cards: each card's text in full, search across the
stream, and the output screen that pages through one card's text however long it is."""
