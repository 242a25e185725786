"""The `diff_drive` kind: a chassis moved by two wheels' real floor contacts."""
