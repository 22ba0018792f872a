-- What a verdict rests on besides the data layer's content: the rows the extractor was given (the
-- cited period and fielded window, e.g. "rows fielded 2026-04-02..2026-04-19: 4,210 of 4,250") and how
-- the claims were compared (as rounded, or an absolute or relative tolerance).
ALTER TABLE verdicts ADD COLUMN rows_used VARCHAR;
ALTER TABLE verdicts ADD COLUMN comparison VARCHAR;
ALTER TABLE verdicts ADD COLUMN absolute_tolerance DOUBLE;
