"""Checkpoints: barrier snapshots of operator state, their storage, restore and restart."""
