//! Row values per table for one file (or a chunk of small files): the ids, the Parts' contents and
//! hashes, the claims, the agent cards' derived columns, and the hand-over of every `BATCH_BYTES` or
//! `BATCH_ROWS` of rows (`Held`, made Arrow by `batches`).

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use super::columns::{Bytes, Column, Flags, Floats, Ints, Moments, TextLists};
use crate::cite::citations::{Citation, EXTENSION_URI, MEDIA_TYPE};
use crate::cite::claims::{Claim, Stating};
use crate::cite::parts::judged;
use crate::json::canonical::{key_hash, write_canonical, Digesting};
use crate::json::write::{compact_json, compact_members, python_str, write_string, Sink};
use crate::json::{Map, Number, Value};
use crate::read::{Record, RecordKind};
use crate::understand::assemble::{Assembled, LocatedPart, StoredCopy};
use crate::understand::model::{ErrorResponse, Part, PartKind};

/// Rows held before they are handed over as Arrow batches: about this many bytes of raw records and Part
/// contents, or this many rows. One record larger than this is a batch of its own.
pub const BATCH_BYTES: usize = 16 * (1 << 20);
pub const BATCH_ROWS: usize = 20_000;

/// The columns every row of a file shares: added once per batch (dictionary-encoded), not per row.
#[derive(Clone, Debug, PartialEq)]
pub struct FileConstants {
    pub path: String,
    pub dir: String,
    pub sha256: String,
    /// Microseconds since 1970-01-01 UTC.
    pub ingested_at: i64,
}

/// A file's version as the archive names it (`SourceVersion`): where its rows' ids come from.
#[derive(Clone, Debug)]
pub struct FileVersion {
    pub path: String,
    pub sha256: String,
    /// What ids are hashed with (`version_key`).
    pub key: String,
    /// When this file was ingested (µs since the epoch), where it has a moment of its own; else the
    /// chunk's. Files of one chunk take consecutive moments, so that the archive keeps their order.
    pub ingested_at: Option<i64>,
}

/// Python's `os.path.dirname` of a POSIX path.
pub fn dirname(path: &str) -> &str {
    let head = &path[..path.rfind('/').map_or(0, |slash| slash + 1)];
    if !head.is_empty() && head.bytes().any(|byte| byte != b'/') {
        head.trim_end_matches('/')
    } else {
        head
    }
}

/// A table's rows held column by column, each column declared once (name: column builder): the struct,
/// `append` (another's rows after these) and `columns` (each column by name, for `batches`).
macro_rules! table_rows {
    ($(#[$doc:meta])* $rows:ident { $($(#[$column_doc:meta])* $column:ident: $kind:ident,)* }) => {
        $(#[$doc])*
        #[derive(Default)]
        pub struct $rows {
            $($(#[$column_doc])* pub $column: $kind,)*
        }

        impl $rows {
            /// Take every row of `other`, after these.
            fn append(&mut self, other: $rows) {
                $(self.$column.append(other.$column);)*
            }

            /// Each column by name, in the order declared.
            pub fn columns(self) -> Vec<(&'static str, Column)> {
                vec![$((stringify!($column), Column::$kind(self.$column)),)*]
            }
        }
    };
}

table_rows! {
    RecordRows {
        record_id: Bytes,
        seq: Ints,
        locator: Bytes,
        line: Ints,
        byte_offset: Ints,
        kind: Bytes,
        sha256: Bytes,
        raw: Bytes,
        status: Bytes,
        reason: Bytes,
        yields: Bytes,
    }
}

table_rows! {
    ResultRows {
        copy_id: Bytes,
        result_key: Bytes,
        kind: Bytes,
        task_id: Bytes,
        context_id: Bytes,
        message_id: Bytes,
        state: Bytes,
        terminal: Flags,
        timestamp: Moments,
        locator: Bytes,
        record_ids: TextLists,
        claims: Ints,
        origin: Bytes,
    }
}

table_rows! {
    PartRows {
        part_id: Bytes,
        copy_id: Bytes,
        result_key: Bytes,
        role: Bytes,
        location: Bytes,
        artifact_id: Bytes,
        artifact_name: Bytes,
        message_id: Bytes,
        part_index: Ints,
        ordinal: Ints,
        kind: Bytes,
        media_type: Bytes,
        content_hash: Bytes,
        text: Bytes,
        data: Bytes,
        file: Bytes,
        metadata: Bytes,
        is_citation: Flags,
    }
}

table_rows! {
    CitationRows {
        part_id: Bytes,
        copy_id: Bytes,
        result_key: Bytes,
        citation_hash: Bytes,
        study: Bytes,
        period: Bytes,
        fielded: Bytes,
        fielded_start: Moments,
        fielded_end: Moments,
        base_name: Bytes,
        base_n: Floats,
        weight: Bytes,
        source_table: Bytes,
        source_column: Bytes,
        source_function: Bytes,
        warnings: TextLists,
        extra: Bytes,
        valid: Flags,
        problems: TextLists,
        inferred: Flags,
    }
}

/// The claims: one row per numeric leaf; a claim's Part columns are sent once per Part (`parts`, the
/// dictionary of the claims' `part_id`, `copy_id`, `result_key` and `content_hash` columns).
#[derive(Default)]
pub struct ClaimRows {
    pub leaves: ClaimLeaves,
    /// Each claim's Part: an index into `parts`.
    pub part: Vec<i32>,
    pub parts: ClaimParts,
}

table_rows! {
    /// A claim's own columns.
    ClaimLeaves {
        pointer: Bytes,
        value: Floats,
        literal: Bytes,
        /// The unit of a number stated in a string ("%", "€", "kg"); null for a number leaf.
        unit: Bytes,
        /// The string a number was stated in ("35%"); null for a number leaf.
        stated: Bytes,
        /// The cell of the table the claim fills (`cite::claims::cell_of`).
        cell: Bytes,
    }
}

table_rows! {
    ClaimParts {
        part_id: Bytes,
        copy_id: Bytes,
        result_key: Bytes,
        content_hash: Bytes,
    }
}

table_rows! {
    CardRows {
        card_id: Bytes,
        record_id: Bytes,
        name: Bytes,
        url: Bytes,
        declares_extension: Flags,
        lists_media_type: Flags,
        card: Bytes,
    }
}

table_rows! {
    ErrorRows {
        record_id: Bytes,
        rpc_id: Bytes,
        code: Bytes,
        message: Bytes,
    }
}

/// The index's tables, each declared once (its place, name and rows), in the order their batches are
/// handed over: `INDEX_TABLES` (their names), `Table` (their places) and `Tables` (every table's rows
/// held, with how many rows each holds).
macro_rules! index_tables {
    ($($place:ident = $table:ident: $rows:ident,)*) => {
        /// What the index's tables are called, in the order their batches are handed over.
        pub const INDEX_TABLES: [&str; 7] = [$(stringify!($table),)*];

        /// A table's place in `INDEX_TABLES`.
        #[derive(Clone, Copy)]
        enum Table {
            $($place,)*
        }

        /// Every table's rows held, column by column, with how many rows each table holds.
        #[derive(Default)]
        pub struct Tables {
            $(pub $table: $rows,)*
            /// Rows per table, in the order of `INDEX_TABLES`.
            pub counts: [usize; 7],
        }

        impl Tables {
            /// Take every row of `other`, after these.
            fn append(&mut self, other: Tables) {
                $(self.$table.append(other.$table);)*
                for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
                    *mine += theirs;
                }
            }

            /// Each table's columns by name, in the order of `INDEX_TABLES`.
            pub fn columns(self) -> [Vec<(&'static str, Column)>; 7] {
                [$(self.$table.columns(),)*]
            }
        }
    };
}

index_tables! {
    Records = records: RecordRows,
    Results = results: ResultRows,
    Parts = parts: PartRows,
    Citations = citations: CitationRows,
    Claims = claims: ClaimRows,
    Cards = agent_cards: CardRows,
    Errors = rpc_errors: ErrorRows,
}

/// Rows handed over: every table's, with the files they are of (`owners`: per table, how many rows in
/// turn are of which of `files`; empty when every row is of the one file).
pub struct Held {
    pub files: Vec<FileConstants>,
    pub tables: Tables,
    pub owners: [Vec<(u32, usize)>; 7],
}

/// Row values per table for one source file, or (`FileRows::together`) for several small files absorbed
/// whole, handed over as `Held` rows every `BATCH_BYTES` or `BATCH_ROWS` when `streamed`.
pub struct FileRows {
    key: String,
    origin: Option<String>,
    /// The file's constant columns; for rows together, those of each file absorbed since the last hand-over.
    files: Vec<FileConstants>,
    together: bool,
    streamed: bool,
    tables: Tables,
    owners: [Vec<(u32, usize)>; 7],
    held_bytes: usize,
    held_rows: usize,
    /// Rows handed over, waiting to become Arrow batches.
    pub handed: VecDeque<Held>,
    pub batch_bytes: usize,
    pub batch_rows: usize,
}

impl FileRows {
    /// The rows of one file; `streamed`: handed over a batch's worth at a time (Python's spool), else held
    /// whole until `hand_over` or `absorb`. `origin`: the spool directory of a spool segment.
    pub fn new(
        version: &FileVersion,
        ingested_at: i64,
        streamed: bool,
        origin: Option<String>,
    ) -> Self {
        let constants = FileConstants {
            path: version.path.clone(),
            dir: dirname(&version.path).to_owned(),
            sha256: version.sha256.clone(),
            ingested_at,
        };
        FileRows {
            key: version.key.clone(),
            origin,
            files: vec![constants],
            together: false,
            streamed,
            ..FileRows::together()
        }
    }

    /// The rows of several small files, each absorbed whole, batched together.
    pub fn together() -> Self {
        FileRows {
            key: String::new(),
            origin: None,
            files: Vec::new(),
            together: true,
            streamed: true,
            tables: Tables::default(),
            owners: Default::default(),
            held_bytes: 0,
            held_rows: 0,
            handed: VecDeque::new(),
            batch_bytes: BATCH_BYTES,
            batch_rows: BATCH_ROWS,
        }
    }

    /// Count rows just added; past a batch's worth, hand them over.
    fn held(&mut self, size: usize, rows: usize) {
        self.held_bytes += size;
        self.held_rows += rows;
        if self.streamed
            && (self.held_bytes >= self.batch_bytes || self.held_rows >= self.batch_rows)
        {
            self.hand_over();
        }
    }

    /// Hand every row held over (to `handed`), and let them go.
    pub fn hand_over(&mut self) {
        let tables = std::mem::take(&mut self.tables);
        let owners = std::mem::take(&mut self.owners);
        let files = if self.together {
            std::mem::take(&mut self.files)
        } else {
            self.files.clone()
        };
        self.held_bytes = 0;
        self.held_rows = 0;
        if tables.counts.iter().any(|&rows| rows > 0) {
            self.handed.push_back(Held {
                files,
                tables,
                owners,
            });
        }
    }

    /// Take every row of one file's `other` (held whole, never handed over), to be batched with the rows
    /// held.
    pub fn absorb(&mut self, other: FileRows) {
        let file = self.files.len() as u32;
        let FileRows {
            mut files,
            tables,
            held_bytes,
            held_rows,
            ..
        } = other;
        self.files.push(files.remove(0));
        for (table, &rows) in tables.counts.iter().enumerate() {
            if rows > 0 {
                self.owners[table].push((file, rows));
            }
        }
        self.tables.append(tables);
        self.held(held_bytes, held_rows);
    }

    pub fn record_id(&self, record: &Record, sha256: &str) -> String {
        key_hash(&[Some(&self.key), Some(&record.locator), Some(sha256)])
    }

    pub fn add_record(
        &mut self,
        record: Record,
        record_id: &str,
        sha256: &str,
        status: &str,
        reason: Option<&str>,
        yields: Option<&str>,
    ) {
        if record.raw.len() >= self.batch_bytes && self.held_rows > 0 && self.streamed {
            self.hand_over(); // a huge record travels in a batch of its own
        }
        let size = record.raw.len();
        let rows = &mut self.tables.records;
        rows.record_id.push_str(record_id);
        rows.seq.push(record.seq as i64);
        rows.locator.push_str(&record.locator);
        rows.line.push_opt(record.line.map(|line| line as i64));
        rows.byte_offset
            .push_opt(record.byte_offset.map(|offset| offset as i64));
        rows.kind.push_str(record.kind.name());
        rows.sha256.push_str(sha256);
        rows.raw.push_owned(record.raw);
        rows.status.push_str(status);
        rows.reason.push_opt(reason);
        rows.yields.push_opt(yields);
        self.tables.counts[Table::Records as usize] += 1;
        self.held(size, 1);
    }

    /// The rows of one thing a file's records assembled into.
    pub fn add_assembled(&mut self, assembled: Assembled) {
        match assembled {
            Assembled::Copy(copy) => self.add_copy(&copy),
            Assembled::Card { record_id, card } => self.add_card(&record_id, &card),
            Assembled::Error { record_id, error } => self.add_error(&record_id, &error),
        }
    }

    pub fn add_copy(&mut self, copy: &StoredCopy) {
        let copy_id = key_hash(&[Some(&self.key), Some(&copy.key)]);
        let mut claim_keys: HashSet<String> = HashSet::new();
        let located = copy.located_parts();
        let ordinals = located.len();
        for (ordinal, part) in located.iter().enumerate() {
            self.add_part(copy, &copy_id, ordinal, part, &mut claim_keys);
        }
        let rows = &mut self.tables.results;
        rows.copy_id.push_str(&copy_id);
        rows.result_key.push_str(&copy.key);
        rows.kind.push_str(copy.kind.name());
        rows.task_id.push_opt(copy.task_id.as_deref());
        rows.context_id.push_opt(copy.context_id.as_deref());
        rows.message_id.push_opt(copy.message_id.as_deref());
        rows.state.push_opt(copy.state.as_deref());
        rows.terminal.push(copy.terminal());
        rows.timestamp.push_opt(copy.timestamp);
        rows.locator.push_opt(copy.locator.as_deref());
        rows.record_ids
            .push(copy.record_ids.iter().map(String::as_str));
        rows.claims.push(claim_keys.len() as i64);
        rows.origin.push_opt(self.origin.as_deref());
        self.tables.counts[Table::Results as usize] += 1;
        self.held(0, 1 + ordinals + claim_keys.len());
    }

    fn add_part(
        &mut self,
        copy: &StoredCopy,
        copy_id: &str,
        ordinal: usize,
        located: &LocatedPart<'_>,
        claim_keys: &mut HashSet<String>,
    ) {
        let part = located.part;
        let part_id = key_hash(&[Some(copy_id), Some(&ordinal.to_string())]);
        let (citation, claims) = judged(
            part.kind,
            part.data.as_ref(),
            part.media_type.as_deref(),
            located.role,
        );
        let part_hash = part_hash(part);
        let data = stored_data(part);
        let file = part.file.as_ref().map(compact_json);
        let metadata = part.metadata.as_ref().map(compact_object);
        let text_chars = part.text.as_deref().map_or(0, |text| text.chars().count());
        self.held_bytes +=
            text_chars + data.as_ref().map_or(0, Vec::len) + file.as_ref().map_or(0, Vec::len);
        let rows = &mut self.tables.parts;
        rows.part_id.push_str(&part_id);
        rows.copy_id.push_str(copy_id);
        rows.result_key.push_str(&copy.key);
        rows.role.push_str(located.role.name());
        rows.location.push_str(located.location.name());
        rows.artifact_id
            .push_opt(located.artifact.and_then(|a| a.artifact_id.as_deref()));
        rows.artifact_name
            .push_opt(located.artifact.and_then(|a| a.name.as_deref()));
        rows.message_id
            .push_opt(located.message.and_then(|m| m.message_id.as_deref()));
        rows.part_index.push(located.part_index as i64);
        rows.ordinal.push(ordinal as i64);
        rows.kind.push_str(part.kind.name());
        rows.media_type.push_opt(part.media_type.as_deref());
        rows.content_hash.push_str(&part_hash);
        rows.text.push_opt(part.text.as_deref());
        rows.data.push_opt_owned(data);
        rows.file.push_opt_owned(file);
        rows.metadata.push_opt_owned(metadata);
        rows.is_citation.push(citation.is_some());
        self.tables.counts[Table::Parts as usize] += 1;
        if let Some(citation) = citation {
            self.add_citation(copy, copy_id, &part_id, &citation);
        } else if !claims.is_empty() {
            self.add_claims(copy, copy_id, &part_id, &part_hash, &claims, claim_keys);
        }
    }

    fn add_citation(&mut self, copy: &StoredCopy, copy_id: &str, part_id: &str, c: &Citation) {
        let rows = &mut self.tables.citations;
        rows.part_id.push_str(part_id);
        rows.copy_id.push_str(copy_id);
        rows.result_key.push_str(&copy.key);
        rows.citation_hash.push_str(&c.citation_hash);
        rows.study.push_opt(c.study.as_deref());
        rows.period.push_opt(c.period.as_deref());
        rows.fielded.push_opt(c.fielded.as_deref());
        rows.fielded_start.push_opt(c.fielded_start.map(i64::from));
        rows.fielded_end.push_opt(c.fielded_end.map(i64::from));
        rows.base_name.push_opt(c.base_name.as_deref());
        rows.base_n.push_opt(c.base_n);
        rows.weight.push_opt(c.weight.as_deref());
        rows.source_table.push_opt(c.source_table.as_deref());
        rows.source_column.push_opt(c.source_column.as_deref());
        rows.source_function.push_opt(c.source_function.as_deref());
        rows.warnings.push(c.warnings.iter().map(String::as_str));
        rows.extra.push_opt(c.extra.as_deref());
        rows.valid.push(c.valid());
        rows.problems.push(c.problems.iter().map(String::as_str));
        rows.inferred.push(c.inferred);
        self.tables.counts[Table::Citations as usize] += 1;
    }

    fn add_claims(
        &mut self,
        copy: &StoredCopy,
        copy_id: &str,
        part_id: &str,
        part_hash: &str,
        found: &[Claim<'_>],
        claim_keys: &mut HashSet<String>,
    ) {
        let claims = &mut self.tables.claims;
        let part = claims.parts.part_id.len() as i32;
        claims.parts.part_id.push_str(part_id);
        claims.parts.copy_id.push_str(copy_id);
        claims.parts.result_key.push_str(&copy.key);
        claims.parts.content_hash.push_str(part_hash);
        for claim in found {
            claims.part.push(part);
            let leaves = &mut claims.leaves;
            leaves.pointer.push_str(&claim.pointer);
            let (value, literal, unit, stated) = claim_columns(&claim.stating);
            leaves.value.push_opt(value);
            leaves.literal.push_str(&literal);
            leaves.unit.push_opt(unit);
            leaves.stated.push_opt(stated);
            leaves.cell.push_opt(claim.cell.as_deref());
            // a part hash is 32 characters: no two keys meet
            claim_keys.insert(format!("{part_hash}{}", claim.pointer));
        }
        self.tables.counts[Table::Claims as usize] += found.len();
    }

    pub fn add_card(&mut self, record_id: &str, card: &Map) {
        let capabilities = card.get("capabilities");
        let extensions = array_of(capabilities.and_then(|c| c.get("extensions")));
        let mut modes: Vec<&Value> =
            array_of(either(card, "defaultOutputModes", "default_output_modes"))
                .iter()
                .collect();
        for skill in array_of(card.get("skills")) {
            if let Value::Object(skill) = skill {
                modes.extend(array_of(either(skill, "outputModes", "output_modes")));
            }
        }
        let interfaces = array_of(either(card, "supportedInterfaces", "supported_interfaces"));
        let first = interfaces.first().and_then(Value::as_object);
        let url = match card.get("url") {
            Some(url) if truthy(url) => Some(url),
            _ => first.and_then(|first| first.get("url")),
        };
        let declares = extensions
            .iter()
            .any(|e| e.get("uri").and_then(Value::as_str) == Some(EXTENSION_URI));
        let lists = modes.iter().any(|mode| mode.as_str() == Some(MEDIA_TYPE));
        let rows = &mut self.tables.agent_cards;
        rows.card_id
            .push_str(&key_hash(&[Some(&self.key), Some(record_id)]));
        rows.record_id.push_str(record_id);
        rows.name.push_opt_owned(id_text(card.get("name")));
        rows.url.push_opt_owned(id_text(url));
        rows.declares_extension.push(declares);
        rows.lists_media_type.push(lists);
        rows.card.push_owned(compact_object(card));
        self.tables.counts[Table::Cards as usize] += 1;
    }

    pub fn add_error(&mut self, record_id: &str, error: &ErrorResponse) {
        let rows = &mut self.tables.rpc_errors;
        rows.record_id.push_str(record_id);
        rows.rpc_id.push_opt_owned(id_text(error.rpc_id.as_ref()));
        rows.code.push_opt_owned(id_text(error.code.as_ref()));
        rows.message.push_opt(error.message.as_deref());
        self.tables.counts[Table::Errors as usize] += 1;
    }
}

impl ClaimRows {
    /// Take every claim of `other`, after these, its Parts after these claims' Parts.
    fn append(&mut self, other: ClaimRows) {
        let offset = self.parts.part_id.len() as i32;
        self.leaves.append(other.leaves);
        self.part
            .extend(other.part.iter().map(|part| part + offset));
        self.parts.append(other.parts);
    }

    /// The claims' columns: the Part columns as dictionaries of the claims' Parts (strings, as
    /// Python's).
    pub fn columns(self) -> Vec<(&'static str, Column)> {
        let keys: Arc<[i32]> = self.part.into();
        let mut columns = self.leaves.columns();
        for (name, column) in self.parts.columns() {
            let Column::Bytes(values) = column else {
                unreachable!("a Part column is text")
            };
            columns.push((name, Column::Keyed(keys.clone(), values)));
        }
        columns
    }
}

/// A claim's `value`, `literal`, `unit` and `stated` columns.
pub fn claim_columns<'a>(
    stating: &'a Stating<'_>,
) -> (Option<f64>, String, Option<&'a str>, Option<&'a str>) {
    match stating {
        Stating::Number(number) => (claim_value(number), python_str(number), None, None),
        Stating::Text(text, number) => (
            number.value.is_finite().then_some(number.value),
            number.literal.clone(),
            number.unit.as_deref(),
            Some(text),
        ),
    }
}

/// A claim's value as a double: null beyond ±1e308 (compared exactly, as Python compares an int with a
/// float).
fn claim_value(number: &Number) -> Option<f64> {
    const LIMIT: f64 = 1e308;
    match number {
        Number::Int(n) => Some(*n as f64),
        Number::UInt(n) => Some(*n as f64),
        Number::Float(f) => (-LIMIT < *f && *f < LIMIT).then_some(*f),
        Number::Big(digits) => big_within_limit(digits)
            .then(|| digits.parse::<f64>().ok())
            .flatten(),
    }
}

/// Whether an integer's decimal digits lie strictly within ±1e308 (the double nearest 1e308, an integer
/// of 309 digits).
fn big_within_limit(digits: &str) -> bool {
    const LIMIT: &str = "100000000000000001097906362944045541740492309677311846336810682903157585404911491537163328978494688899061249669721172515611590283743140088328307009198146046031271664502933027185697489699588559043338384466165001178426897626212945177628091195786707458122783970171784415105291802893207873272974885715430223118336";
    let magnitude = digits.trim_start_matches('-').trim_start_matches('0');
    magnitude.len() < LIMIT.len() || (magnitude.len() == LIMIT.len() && magnitude < LIMIT)
}

/// Python's truth of a JSON value.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(Number::Int(n)) => *n != 0,
        Value::Number(Number::UInt(n)) => *n != 0,
        Value::Number(Number::Big(_)) => true,
        Value::Number(Number::Float(f)) => *f != 0.0,
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// `obj.get(first) or obj.get(second)`.
fn either<'a>(obj: &'a Map, first: &str, second: &str) -> Option<&'a Value> {
    match obj.get(first) {
        Some(value) if truthy(value) => Some(value),
        _ => obj.get(second),
    }
}

/// A card field that should be an array; anything else (a hostile card) as empty.
fn array_of(value: Option<&Value>) -> &[Value] {
    match value {
        Some(Value::Array(items)) => items,
        _ => &[],
    }
}

/// An id or code as text: a string as it is, anything else as its compact JSON; null as None.
fn id_text(value: Option<&Value>) -> Option<Vec<u8>> {
    match value? {
        Value::Null => None,
        Value::String(text) => Some(text.as_bytes().to_vec()),
        other => Some(compact_json(other)),
    }
}

/// Compact JSON of an object, written member by member.
pub fn compact_object(map: &Map) -> Vec<u8> {
    compact_members(map.iter().map(|(key, value)| (&**key, value)))
}

/// The `data` column: a data Part's data, or an undecoded Part's whole object (kind unknown).
fn stored_data(part: &Part) -> Option<Vec<u8>> {
    match part.kind {
        PartKind::Data => part.data.as_ref().map(compact_json),
        PartKind::Unknown => part.raw.as_ref().map(compact_object),
        _ => None,
    }
}

/// A Part's identity: the content hash of `{kind: content}` (`content_hash({part.kind: _content(part)})`),
/// its canonical JSON hashed piece by piece as it is written: canonical JSON of an object is its
/// members' canonical JSON in key order, so no copy of the content is made to wrap it, nor its text held.
pub fn part_hash(part: &Part) -> String {
    let mut text = Digesting::default();
    text.bytes(b"{\"");
    text.bytes(part.kind.name().as_bytes());
    text.bytes(b"\":");
    match part.kind {
        PartKind::Text => match &part.text {
            Some(text_value) => write_string(text_value, &mut text),
            None => text.bytes(b"null"),
        },
        PartKind::Data => canonical_or_null(part.data.as_ref(), &mut text),
        PartKind::Unknown => match &part.raw {
            Some(raw) => canonical_object(raw.iter().map(|(k, v)| (&**k, v)), &mut text),
            None => text.bytes(b"null"),
        },
        PartKind::File => match &part.file {
            Some(Value::Object(file)) => canonical_object(
                file.iter()
                    .filter(|(k, _)| &***k != "name")
                    .map(|(k, v)| (&**k, v)),
                &mut text,
            ),
            other => canonical_or_null(other.as_ref(), &mut text),
        },
    }
    text.byte(b'}');
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = text.finish();
    digest[..16]
        .iter()
        .flat_map(|byte| {
            [
                DIGITS[usize::from(byte >> 4)] as char,
                DIGITS[usize::from(byte & 15)] as char,
            ]
        })
        .collect()
}

fn canonical_or_null(value: Option<&Value>, out: &mut Digesting) {
    match value {
        Some(value) => write_canonical(value, out),
        None => out.bytes(b"null"),
    }
}

/// Canonical JSON of an object's members, sorted by key.
fn canonical_object<'a>(members: impl Iterator<Item = (&'a str, &'a Value)>, out: &mut Digesting) {
    let mut members: Vec<(&str, &Value)> = members.collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.byte(b'{');
    for (index, (key, value)) in members.into_iter().enumerate() {
        if index > 0 {
            out.byte(b',');
        }
        write_string(key, out);
        out.byte(b':');
        write_canonical(value, out);
    }
    out.byte(b'}');
}

/// A file quarantined whole, as one unreadable record holding its bytes (`whole_file`).
pub fn unreadable_record(raw: Vec<u8>, reason: &str) -> Record {
    Record {
        seq: 0,
        locator: "file".to_owned(),
        raw,
        kind: RecordKind::Unreadable,
        line: None,
        byte_offset: Some(0),
        payload: crate::read::Payload::None,
        error: Some(reason.to_owned()),
        envelope: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirname_is_pythons() {
        assert_eq!(dirname("/a/b/c.jsonl"), "/a/b");
        assert_eq!(dirname("c.jsonl"), "");
        assert_eq!(dirname("/c.jsonl"), "/");
        assert_eq!(dirname("//c"), "//");
        assert_eq!(dirname("/a//b"), "/a");
        assert_eq!(dirname("<stdin>"), "");
        assert_eq!(dirname("sqlite:///x/y.db tasks"), "sqlite:///x");
    }

    #[test]
    fn claim_values_are_null_beyond_1e308() {
        assert_eq!(claim_value(&Number::Int(3)), Some(3.0));
        assert_eq!(claim_value(&Number::Float(1e308)), None);
        assert_eq!(claim_value(&Number::Float(-1e308)), None);
        assert_eq!(claim_value(&Number::Float(9.9e307)), Some(9.9e307));
        assert_eq!(claim_value(&Number::Float(f64::NAN)), None);
        assert_eq!(claim_value(&Number::Big("1".repeat(309).into())), None);
        assert_eq!(
            claim_value(&Number::Big(format!("-{}", "9".repeat(308)).into())),
            Some(-1e308)
        );
        assert_eq!(
            claim_value(&Number::Big("100000000000000000000".into())),
            Some(1e20)
        );
    }

    #[test]
    fn a_limit_sized_integer_is_compared_exactly() {
        let limit = "100000000000000001097906362944045541740492309677311846336810682903157585404911491537163328978494688899061249669721172515611590283743140088328307009198146046031271664502933027185697489699588559043338384466165001178426897626212945177628091195786707458122783970171784415105291802893207873272974885715430223118336";
        assert!(!big_within_limit(limit));
        assert!(big_within_limit(&format!("{}5", &limit[..limit.len() - 1])));
        assert!(!big_within_limit(&format!("-{limit}")));
        assert_eq!(limit.parse::<f64>().unwrap(), 1e308);
    }

    #[test]
    fn a_parts_hash_is_that_of_its_canonical_text_however_large() {
        let large = "x/+".repeat(10_000);
        let file: Map = [("name", "f.bin"), ("bytes", large.as_str())]
            .into_iter()
            .map(|(key, text)| (key.into(), Value::String(text.into())))
            .collect();
        let part = Part {
            kind: PartKind::File,
            text: None,
            data: None,
            file: Some(Value::Object(file)),
            media_type: None,
            metadata: None,
            raw: None,
        };
        let text = format!(r#"{{"file":{{"bytes":"{large}"}}}}"#);
        let expected = crate::json::canonical::sha256_hex(text.as_bytes());
        assert_eq!(part_hash(&part), expected[..32]);
        let part = Part {
            kind: PartKind::Text,
            text: Some(format!("{large}\n").into()),
            file: None,
            ..part
        };
        let text = format!(r#"{{"text":"{large}\n"}}"#);
        let expected = crate::json::canonical::sha256_hex(text.as_bytes());
        assert_eq!(part_hash(&part), expected[..32]);
    }

    #[test]
    fn truth_is_pythons() {
        assert!(!truthy(&Value::String("".into())));
        assert!(!truthy(&Value::Number(Number::Float(-0.0))));
        assert!(truthy(&Value::Number(Number::Float(f64::NAN))));
        assert!(!truthy(&Value::Array(vec![])));
        assert!(truthy(&Value::Bool(true)));
    }
}
