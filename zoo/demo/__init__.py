"""Small generated, seeded corpora that the recipes run on when no data is given."""
