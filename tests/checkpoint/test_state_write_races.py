"""A subtask writing its state while the coordinator removes the aborted checkpoint's folder
(a checkpoint past 'execution.checkpointing.timeout'): Path.mkdir(exist_ok=True) then raises
FileExistsError when the folder goes between its EEXIST and its is_dir() check. The write
goes on, as for the folder going between the mkdir and the open (a CI run failed the job with
"FileExistsError: [Errno 17] File exists: .../chk-17")."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from sqlengine.runtime.checkpoint.storage import CheckpointStorage


def test_a_state_write_outlives_its_folder_being_removed(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    storage = CheckpointStorage(tmp_path)
    real = Path.mkdir
    raced: list[Path] = []

    def mkdir(self: Path, *args: object, **kwargs: object) -> None:
        if self.name == "chk-17" and not raced:
            raced.append(self)
            raise FileExistsError(17, "File exists", str(self))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", mkdir)
    entry = storage.write_state(17, "v2-1", {"rows": [1, 2]})
    assert raced
    written = storage.checkpoint_dir(17) / entry["file"]
    assert pickle.loads(written.read_bytes()) == {"rows": [1, 2]}
