"""What an ingest did: files by outcome, records, problems, and the archive's totals after it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..prepare import FileOutcome

INDEX_TOTALS = ("tasks", "results", "copies", "parts", "citations", "claims", "agent_cards", "error_responses")
"""Fields that count the archive after a run (the last pass's are the archive's), not the run's work."""


@dataclass
class IngestSummary:
    files: int = 0
    files_unchanged: int = 0
    files_aliased: int = 0
    """Files holding bytes the archive stores already at another path: recorded as aliases, nothing more."""
    records: int = 0
    duplicates_skipped: int = 0
    quarantined: int = 0
    tasks: int = 0
    results: int = 0
    copies: int = 0
    parts: int = 0
    citations: int = 0
    claims: int = 0
    agent_cards: int = 0
    error_responses: int = 0
    unrecognised_files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    claimed_elsewhere: list[str] = field(default_factory=list)
    not_stored: list[str] = field(default_factory=list)
    """Files left unstored because another live writer of the lake holds them (also in `claimed_elsewhere`)."""
    leases_taken_over: list[str] = field(default_factory=list)
    commit_retries: int = 0
    archive_files_skipped: int = 0
    """Paths that reached the archive's own files (its database, .wal, a lake's Parquet files): never read."""
    folders_unreadable: list[str] = field(default_factory=list)
    """Folders found in a walk that could not be listed (no permission): their files were not read."""

    def as_dict(self) -> dict:
        return asdict(self)

    def count_retry(self, _exc: Exception) -> None:
        """Hears of a commit retried because another writer's got in the way."""
        self.commit_retries += 1

    @property
    def found_nothing(self) -> bool:
        """No file at all, or none but files in which no A2A object was recognised: nothing to archive."""
        return self.files == 0 or len(self.unrecognised_files) == self.files

    @property
    def exit_code(self) -> int:
        """1 when a record was quarantined, nothing was found to archive, or files were left unstored
        because another writer of the lake was ingesting them; else 0."""
        return 1 if self.quarantined or self.found_nothing or self.not_stored else 0

    @property
    def stored(self) -> int:
        """Files this run committed: not unchanged, not an alias, not another writer's."""
        return self.files - self.files_unchanged - self.files_aliased - len(self.claimed_elsewhere)

    @property
    def new_records(self) -> int:
        return self.records - self.duplicates_skipped

    def committed(self, when: str, planned: int = 0) -> str:
        """What was committed (of the `planned` files, when given), for the one line an interrupted run ends
        with ("before stopping")."""
        files = f"{self.stored} of {planned}" if planned else str(self.stored)
        plural = "s" * ((planned or self.stored) != 1)
        return f"committed {files} file{plural} ({self.new_records} new records) {when}"

    def tally(self, outcome: FileOutcome) -> None:
        """Count one file done: committed, unchanged, an alias, or left to another writer."""
        self.files += 1
        if outcome.elsewhere:
            self.claimed_elsewhere.append(f"{outcome.path}: {outcome.elsewhere}")
            return
        self.records += outcome.records
        self.quarantined += outcome.quarantined
        self.problems += outcome.problems
        if outcome.unchanged or outcome.alias_of:
            self.files_unchanged += outcome.unchanged
            self.files_aliased += bool(outcome.alias_of)
            self.duplicates_skipped += outcome.records
        else:
            self.duplicates_skipped += outcome.records - outcome.new_records
            if outcome.recognised == 0:
                self.unrecognised_files.append(outcome.path)

    def add(self, later: IngestSummary) -> None:
        """Add a later run's work to this one (a follow's passes); the archive's totals are the later's."""
        for name, value in later.as_dict().items():
            setattr(self, name, value if name in INDEX_TOTALS else getattr(self, name) + value)
