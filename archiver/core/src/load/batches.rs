//! Arrow record batches of held rows, typed by the schemas the migrated archive declares
//! (`FileRows.tables` of `archiver/load/rows.py`): every column as the schema types it (JSON columns as
//! the `arrow.json` extension, a field's metadata kept), the file's constant columns (`source_path`,
//! `source_dir`, `source_sha256`) and the claims' Part columns dictionary-encoded, `ingested_at` the
//! moment of the ingest.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray, PrimitiveArray, RecordBatch};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::columns::{
    moments_array, segments, BatchError, Bytes, Flags, Floats, Ints, Moments, TextLists,
};
use super::rows::{
    CardRows, CitationRows, ClaimRows, ErrorRows, FileConstants, Held, PartRows, RecordRows,
    ResultRows, INDEX_TABLES,
};

/// The archive's Arrow schema of each index table, in the order of `INDEX_TABLES`.
#[derive(Clone, Debug)]
pub struct Schemas {
    tables: Vec<SchemaRef>,
}

impl Schemas {
    /// The schemas by table name; every index table must have one.
    pub fn new(mut by_name: HashMap<String, SchemaRef>) -> Result<Self, BatchError> {
        let tables = INDEX_TABLES
            .iter()
            .map(|name| {
                by_name
                    .remove(*name)
                    .ok_or_else(|| BatchError(format!("no schema for the table {name}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Schemas { tables })
    }
}

/// The most bytes one column of one batch holds in its shared buffer (Arrow's 32-bit offsets).
const MAX_SPAN: usize = i32::MAX as usize;

/// One column of held rows, whatever its values.
enum Column {
    Bytes(Bytes),
    Ints(Ints),
    Floats(Floats),
    Flags(Flags),
    Moments(Moments),
    Lists(TextLists),
    /// Indices into the values (a claim's Part column).
    Dictionary(Arc<[i32]>, ArrayRef),
}

/// The (table name, Arrow batch) pairs of held rows, tables in the order of `INDEX_TABLES`; a table is
/// one batch, or several where a huge value is cut into a batch of its own.
pub fn batches(
    held: Held,
    schemas: &Schemas,
) -> Result<Vec<(&'static str, RecordBatch)>, BatchError> {
    let Held {
        files,
        tables,
        owners,
    } = held;
    let counts = tables.counts;
    let columns: [Vec<(&str, Column)>; 7] = [
        record_columns(tables.records),
        result_columns(tables.results),
        part_columns(tables.parts),
        citation_columns(tables.citations),
        claim_columns(tables.claims)?,
        card_columns(tables.agent_cards),
        error_columns(tables.rpc_errors),
    ];
    let mut out = Vec::new();
    for (table, columns) in columns.into_iter().enumerate() {
        if counts[table] == 0 {
            continue;
        }
        let files_of_rows = row_files(&owners[table], counts[table]);
        let name = INDEX_TABLES[table];
        for batch in table_batches(
            &schemas.tables[table],
            columns,
            counts[table],
            &files_of_rows,
            &files,
        )? {
            out.push((name, batch));
        }
    }
    Ok(out)
}

/// Which of the files each row is of: runs of (file, rows), or every row of the first file.
fn row_files(owners: &[(u32, usize)], len: usize) -> Vec<i32> {
    if owners.is_empty() {
        return vec![0; len];
    }
    owners
        .iter()
        .flat_map(|&(file, rows)| std::iter::repeat_n(file as i32, rows))
        .collect()
}

fn table_batches(
    schema: &Schema,
    columns: Vec<(&str, Column)>,
    len: usize,
    files_of_rows: &[i32],
    files: &[FileConstants],
) -> Result<Vec<RecordBatch>, BatchError> {
    let cuts = cut(&columns, len);
    let mut by_name: HashMap<&str, Column> = columns.into_iter().collect();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut arrays: Vec<Vec<ArrayRef>> = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let column = match field.name().as_str() {
            "source_path" => constant(files, |file| &file.path, files_of_rows, &cuts)?,
            "source_dir" => constant(files, |file| &file.dir, files_of_rows, &cuts)?,
            "source_sha256" => constant(files, |file| &file.sha256, files_of_rows, &cuts)?,
            "ingested_at" => moments(files, files_of_rows, &cuts, field.data_type())?,
            name => match by_name.remove(name) {
                Some(column) => arrays_of(column, &cuts, field.data_type())?,
                None => {
                    return Err(BatchError(format!(
                        "the core has no values for the column {name}"
                    )))
                }
            },
        };
        let data_type = column.first().map_or_else(
            || field.data_type().clone(),
            |array| array.data_type().clone(),
        );
        fields.push(Field::clone(field).with_data_type(data_type));
        arrays.push(column);
    }
    let schema = Arc::new(Schema::new(fields));
    (0..cuts.len())
        .map(|segment| {
            let columns = arrays
                .iter()
                .map(|column| column[segment].clone())
                .collect();
            RecordBatch::try_new(schema.clone(), columns).map_err(|e| BatchError(e.to_string()))
        })
        .collect()
}

/// Where a table's rows are cut into batches: around each huge value, and before a column's text would
/// pass what 32-bit offsets address.
fn cut(columns: &[(&str, Column)], len: usize) -> Vec<Range<usize>> {
    let texts: Vec<&Bytes> = columns
        .iter()
        .filter_map(|(_, column)| match column {
            Column::Bytes(bytes) => Some(bytes),
            _ => None,
        })
        .collect();
    let mut huge: Vec<usize> = texts.iter().flat_map(|bytes| bytes.huge_rows()).collect();
    huge.sort_unstable();
    huge.dedup();
    let span = |rows: Range<usize>| {
        texts
            .iter()
            .map(|bytes| bytes.span(rows.clone()))
            .max()
            .unwrap_or(0)
    };
    segments(len, &huge, &span, MAX_SPAN)
}

fn arrays_of(
    column: Column,
    cuts: &[Range<usize>],
    data_type: &DataType,
) -> Result<Vec<ArrayRef>, BatchError> {
    match column {
        Column::Bytes(bytes) => bytes.arrays(cuts, data_type),
        Column::Ints(ints) => ints.arrays(cuts, data_type),
        Column::Floats(floats) => floats.arrays(cuts, data_type),
        Column::Flags(flags) => flags.arrays(cuts, data_type),
        Column::Moments(moments) => moments.arrays(cuts, data_type),
        Column::Lists(lists) => lists.arrays(cuts, data_type),
        Column::Dictionary(keys, values) => cuts
            .iter()
            .map(|rows| dictionary(&keys[rows.clone()], &values))
            .collect(),
    }
}

fn dictionary(keys: &[i32], values: &ArrayRef) -> Result<ArrayRef, BatchError> {
    let keys = PrimitiveArray::<Int32Type>::new(ScalarBuffer::from(keys.to_vec()), None);
    DictionaryArray::try_new(keys, values.clone())
        .map(|array| Arc::new(array) as ArrayRef)
        .map_err(|e| BatchError(e.to_string()))
}

/// A file's constant column: each row's file, as indices into the files' values (a dictionary).
fn constant(
    files: &[FileConstants],
    value: impl Fn(&FileConstants) -> &String,
    files_of_rows: &[i32],
    cuts: &[Range<usize>],
) -> Result<Vec<ArrayRef>, BatchError> {
    let mut values = Bytes::default();
    for file in files {
        values.push_str(value(file));
    }
    let values = values.array(&DataType::Utf8)?;
    cuts.iter()
        .map(|rows| dictionary(&files_of_rows[rows.clone()], &values))
        .collect()
}

/// `ingested_at`: each row's file's moment.
fn moments(
    files: &[FileConstants],
    files_of_rows: &[i32],
    cuts: &[Range<usize>],
    data_type: &DataType,
) -> Result<Vec<ArrayRef>, BatchError> {
    cuts.iter()
        .map(|rows| {
            let values = files_of_rows[rows.clone()]
                .iter()
                .map(|&file| files[file as usize].ingested_at)
                .collect();
            moments_array(values, None, data_type)
        })
        .collect()
}

fn record_columns(r: RecordRows) -> Vec<(&'static str, Column)> {
    vec![
        ("record_id", Column::Bytes(r.record_id)),
        ("seq", Column::Ints(r.seq)),
        ("locator", Column::Bytes(r.locator)),
        ("line", Column::Ints(r.line)),
        ("byte_offset", Column::Ints(r.byte_offset)),
        ("kind", Column::Bytes(r.kind)),
        ("sha256", Column::Bytes(r.sha256)),
        ("raw", Column::Bytes(r.raw)),
        ("status", Column::Bytes(r.status)),
        ("reason", Column::Bytes(r.reason)),
        ("yields", Column::Bytes(r.yields)),
    ]
}

fn result_columns(r: ResultRows) -> Vec<(&'static str, Column)> {
    vec![
        ("copy_id", Column::Bytes(r.copy_id)),
        ("result_key", Column::Bytes(r.result_key)),
        ("kind", Column::Bytes(r.kind)),
        ("task_id", Column::Bytes(r.task_id)),
        ("context_id", Column::Bytes(r.context_id)),
        ("message_id", Column::Bytes(r.message_id)),
        ("state", Column::Bytes(r.state)),
        ("terminal", Column::Flags(r.terminal)),
        ("timestamp", Column::Moments(r.timestamp)),
        ("locator", Column::Bytes(r.locator)),
        ("record_ids", Column::Lists(r.record_ids)),
        ("claims", Column::Ints(r.claims)),
        ("origin", Column::Bytes(r.origin)),
    ]
}

fn part_columns(r: PartRows) -> Vec<(&'static str, Column)> {
    vec![
        ("part_id", Column::Bytes(r.part_id)),
        ("copy_id", Column::Bytes(r.copy_id)),
        ("result_key", Column::Bytes(r.result_key)),
        ("role", Column::Bytes(r.role)),
        ("location", Column::Bytes(r.location)),
        ("artifact_id", Column::Bytes(r.artifact_id)),
        ("artifact_name", Column::Bytes(r.artifact_name)),
        ("message_id", Column::Bytes(r.message_id)),
        ("part_index", Column::Ints(r.part_index)),
        ("ordinal", Column::Ints(r.ordinal)),
        ("kind", Column::Bytes(r.kind)),
        ("media_type", Column::Bytes(r.media_type)),
        ("content_hash", Column::Bytes(r.content_hash)),
        ("text", Column::Bytes(r.text)),
        ("data", Column::Bytes(r.data)),
        ("file", Column::Bytes(r.file)),
        ("metadata", Column::Bytes(r.metadata)),
        ("is_citation", Column::Flags(r.is_citation)),
    ]
}

fn citation_columns(r: CitationRows) -> Vec<(&'static str, Column)> {
    vec![
        ("part_id", Column::Bytes(r.part_id)),
        ("copy_id", Column::Bytes(r.copy_id)),
        ("result_key", Column::Bytes(r.result_key)),
        ("citation_hash", Column::Bytes(r.citation_hash)),
        ("study", Column::Bytes(r.study)),
        ("period", Column::Bytes(r.period)),
        ("fielded", Column::Bytes(r.fielded)),
        ("fielded_start", Column::Moments(r.fielded_start)),
        ("fielded_end", Column::Moments(r.fielded_end)),
        ("base_name", Column::Bytes(r.base_name)),
        ("base_n", Column::Floats(r.base_n)),
        ("weight", Column::Bytes(r.weight)),
        ("source_table", Column::Bytes(r.source_table)),
        ("source_column", Column::Bytes(r.source_column)),
        ("source_function", Column::Bytes(r.source_function)),
        ("warnings", Column::Lists(r.warnings)),
        ("extra", Column::Bytes(r.extra)),
        ("valid", Column::Flags(r.valid)),
        ("problems", Column::Lists(r.problems)),
        ("inferred", Column::Flags(r.inferred)),
    ]
}

/// The claims' columns: the Part columns as dictionaries of the claims' Parts (strings, as Python's).
fn claim_columns(r: ClaimRows) -> Result<Vec<(&'static str, Column)>, BatchError> {
    let ClaimRows {
        pointer,
        value,
        literal,
        unit,
        stated,
        cell,
        part,
        parts,
    } = r;
    let keys: Arc<[i32]> = part.into();
    let dictionary =
        |name: &'static str, values: Bytes| -> Result<(&'static str, Column), BatchError> {
            let values = values.array(&DataType::Utf8)?;
            Ok((name, Column::Dictionary(keys.clone(), values)))
        };
    Ok(vec![
        ("pointer", Column::Bytes(pointer)),
        ("value", Column::Floats(value)),
        ("literal", Column::Bytes(literal)),
        ("unit", Column::Bytes(unit)),
        ("stated", Column::Bytes(stated)),
        ("cell", Column::Bytes(cell)),
        dictionary("part_id", parts.part_id)?,
        dictionary("copy_id", parts.copy_id)?,
        dictionary("result_key", parts.result_key)?,
        dictionary("content_hash", parts.content_hash)?,
    ])
}

fn card_columns(r: CardRows) -> Vec<(&'static str, Column)> {
    vec![
        ("card_id", Column::Bytes(r.card_id)),
        ("record_id", Column::Bytes(r.record_id)),
        ("name", Column::Bytes(r.name)),
        ("url", Column::Bytes(r.url)),
        ("declares_extension", Column::Flags(r.declares_extension)),
        ("lists_media_type", Column::Flags(r.lists_media_type)),
        ("card", Column::Bytes(r.card)),
    ]
}

fn error_columns(r: ErrorRows) -> Vec<(&'static str, Column)> {
    vec![
        ("record_id", Column::Bytes(r.record_id)),
        ("rpc_id", Column::Bytes(r.rpc_id)),
        ("code", Column::Bytes(r.code)),
        ("message", Column::Bytes(r.message)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Map, Number, Value};
    use crate::load::rows::{FileRows, FileVersion};
    use crate::read::{Payload, Record, RecordKind};
    use crate::understand::assemble::{CopyKind, StoredCopy};
    use crate::understand::model::{Artifact, ErrorResponse, Part, PartKind};
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_array::Array;
    use arrow_schema::TimeUnit;

    fn json_field(name: &str) -> Field {
        let metadata = [
            ("ARROW:extension:name".to_owned(), "arrow.json".to_owned()),
            ("ARROW:extension:metadata".to_owned(), String::new()),
        ];
        Field::new(name, DataType::Utf8, true)
            .with_metadata(metadata.into_iter().collect::<HashMap<String, String>>())
    }

    fn text(names: &[&str]) -> Vec<Field> {
        names
            .iter()
            .map(|name| Field::new(*name, DataType::Utf8, true))
            .collect()
    }

    fn list() -> DataType {
        DataType::List(Arc::new(Field::new("l", DataType::Utf8, true)))
    }

    /// The archive's schemas as `arrow_schemas` gives them (migrations 0001 to 0010).
    fn schemas() -> Schemas {
        let moment = DataType::Timestamp(TimeUnit::Microsecond, Some("Etc/UTC".into()));
        let field = |name: &str, t: DataType| Field::new(name, t, true);
        let mut records = text(&["record_id", "source_path"]);
        records.push(field("seq", DataType::Int64));
        records.extend(text(&["locator"]));
        records.push(field("line", DataType::Int64));
        records.push(field("byte_offset", DataType::Int64));
        records.extend(text(&["kind", "sha256"]));
        records.push(field("raw", DataType::Binary));
        records.extend(text(&["status", "reason"]));
        records.push(field("ingested_at", moment.clone()));
        records.extend(text(&["source_sha256", "yields"]));
        let mut results = text(&[
            "copy_id",
            "result_key",
            "kind",
            "task_id",
            "context_id",
            "message_id",
            "state",
        ]);
        results.push(field("terminal", DataType::Boolean));
        results.push(field("timestamp", moment));
        results.extend(text(&["source_path", "source_dir", "locator"]));
        results.push(field("record_ids", list()));
        results.push(field("claims", DataType::Int32));
        results.extend(text(&["source_sha256", "origin"]));
        let mut parts = text(&[
            "part_id",
            "copy_id",
            "result_key",
            "source_path",
            "role",
            "location",
            "artifact_id",
            "artifact_name",
            "message_id",
        ]);
        parts.push(field("part_index", DataType::Int32));
        parts.push(field("ordinal", DataType::Int32));
        parts.extend(text(&["kind", "media_type", "content_hash", "text"]));
        parts.extend([
            json_field("data"),
            json_field("file"),
            json_field("metadata"),
        ]);
        parts.push(field("is_citation", DataType::Boolean));
        parts.extend(text(&["source_sha256"]));
        let mut citations = text(&[
            "part_id",
            "copy_id",
            "result_key",
            "source_path",
            "citation_hash",
            "study",
            "period",
            "fielded",
        ]);
        citations.push(field("fielded_start", DataType::Date32));
        citations.push(field("fielded_end", DataType::Date32));
        citations.extend(text(&["base_name"]));
        citations.push(field("base_n", DataType::Float64));
        citations.extend(text(&[
            "weight",
            "source_table",
            "source_column",
            "source_function",
        ]));
        citations.push(field("warnings", list()));
        citations.push(json_field("extra"));
        citations.push(field("valid", DataType::Boolean));
        citations.push(field("problems", list()));
        citations.push(field("inferred", DataType::Boolean));
        citations.extend(text(&["source_sha256"]));
        let mut claims = text(&["part_id", "pointer", "copy_id", "result_key", "source_path"]);
        claims.push(field("value", DataType::Float64));
        claims.extend(text(&[
            "literal",
            "content_hash",
            "source_sha256",
            "unit",
            "stated",
            "cell",
        ]));
        let mut cards = text(&[
            "card_id",
            "source_path",
            "source_dir",
            "record_id",
            "name",
            "url",
        ]);
        cards.push(field("declares_extension", DataType::Boolean));
        cards.push(field("lists_media_type", DataType::Boolean));
        cards.push(json_field("card"));
        cards.extend(text(&["source_sha256"]));
        let errors = text(&[
            "record_id",
            "source_path",
            "rpc_id",
            "code",
            "message",
            "source_sha256",
        ]);
        let by_name = [
            ("records", records),
            ("results", results),
            ("parts", parts),
            ("citations", citations),
            ("claims", claims),
            ("agent_cards", cards),
            ("rpc_errors", errors),
        ]
        .into_iter()
        .map(|(name, fields)| (name.to_owned(), Arc::new(Schema::new(fields))))
        .collect();
        Schemas::new(by_name).unwrap()
    }

    fn version(path: &str) -> FileVersion {
        FileVersion {
            ingested_at: None,
            path: path.to_owned(),
            sha256: format!("sha-{path}"),
            key: path.to_owned(),
        }
    }

    fn record(seq: u64, raw: &[u8]) -> Record {
        Record {
            seq,
            locator: format!("line {}", seq + 1),
            raw: raw.to_vec(),
            kind: RecordKind::Json,
            line: Some(seq + 1),
            byte_offset: Some(seq * 10),
            payload: Payload::None,
            error: None,
            envelope: None,
        }
    }

    fn data_part(data: Value) -> Part {
        Part {
            kind: PartKind::Data,
            text: None,
            data: Some(data),
            file: None,
            media_type: None,
            metadata: None,
            raw: None,
        }
    }

    fn copy(parts: Vec<Part>) -> StoredCopy {
        let artifact = Artifact {
            artifact_id: Some("a".into()),
            name: None,
            parts,
            metadata: None,
        };
        StoredCopy {
            key: "task:t1".into(),
            kind: CopyKind::Task,
            task_id: Some("t1".into()),
            context_id: Some("c".into()),
            message_id: None,
            state: Some("completed".into()),
            timestamp: Some(1_776_000_000_000_000),
            metadata: None,
            artifacts: [("a".to_owned(), artifact)].into_iter().collect(),
            messages: Default::default(),
            record_ids: vec!["r1".into(), "r2".into()],
            locator: Some("line 1".into()),
        }
    }

    fn object(pairs: &[(&str, Value)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| ((*k).into(), v.clone()))
                .collect::<Map>(),
        )
    }

    fn made(mut rows: FileRows) -> Vec<(&'static str, RecordBatch)> {
        rows.hand_over();
        let schemas = schemas();
        rows.handed
            .drain(..)
            .flat_map(|held| batches(held, &schemas).unwrap())
            .collect()
    }

    #[test]
    fn records_become_a_batch_with_the_files_constant_columns() {
        let mut rows = FileRows::new(&version("/d/f.jsonl"), 7, true, None);
        rows.add_record(record(0, b"{}"), "id0", "s0", "ok", None, None);
        rows.add_record(
            record(1, b"x"),
            "id1",
            "s1",
            "quarantined",
            Some("invalid JSON: x"),
            None,
        );
        let batches = made(rows);
        assert_eq!(batches.len(), 1);
        let (name, batch) = &batches[0];
        assert_eq!(*name, "records");
        assert_eq!(batch.num_rows(), 2);
        let path = batch
            .column_by_name("source_path")
            .unwrap()
            .as_dictionary::<Int32Type>();
        assert_eq!(path.keys().values().to_vec(), vec![0, 0]);
        assert_eq!(path.values().as_string::<i32>().value(0), "/d/f.jsonl");
        assert_eq!(
            batch
                .column_by_name("raw")
                .unwrap()
                .as_binary::<i32>()
                .value(1),
            b"x"
        );
        assert_eq!(batch.column_by_name("reason").unwrap().null_count(), 1);
        let moment = batch.column_by_name("ingested_at").unwrap();
        assert_eq!(
            moment.data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("Etc/UTC".into()))
        );
    }

    #[test]
    fn a_huge_record_travels_alone() {
        let mut rows = FileRows::new(&version("f"), 0, true, None);
        rows.batch_bytes = 100;
        rows.add_record(record(0, b"{}"), "a", "s", "ok", None, None);
        rows.add_record(record(1, &[b' '; 150]), "b", "s", "ok", None, None);
        rows.add_record(record(2, b"{}"), "c", "s", "ok", None, None);
        assert_eq!(rows.handed.len(), 2); // the small one before, the huge one alone (it filled a batch)
        let sizes: Vec<usize> = made(rows)
            .iter()
            .map(|(_, batch)| batch.num_rows())
            .collect();
        assert_eq!(sizes, vec![1, 1, 1]);
    }

    #[test]
    fn files_absorbed_together_name_their_rows_files() {
        let mut together = FileRows::together();
        for (n, path) in ["/a/1", "/b/2"].iter().enumerate() {
            let mut rows = FileRows::new(&version(path), n as i64, false, None);
            rows.add_record(record(0, b"{}"), "id", "s", "ok", None, None);
            if n == 1 {
                rows.add_error(
                    "id",
                    &ErrorResponse {
                        rpc_id: Some(Value::Number(Number::Int(3))),
                        code: None,
                        message: None,
                    },
                );
            }
            together.absorb(rows);
        }
        let batches = made(together);
        let names: Vec<&str> = batches.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, vec!["records", "rpc_errors"]);
        let records = &batches[0].1;
        let dirs = records
            .column_by_name("source_path")
            .unwrap()
            .as_dictionary::<Int32Type>();
        assert_eq!(dirs.keys().values().to_vec(), vec![0, 1]);
        let errors = &batches[1].1;
        let path = errors
            .column_by_name("source_path")
            .unwrap()
            .as_dictionary::<Int32Type>();
        assert_eq!(path.keys().values().to_vec(), vec![1]);
        assert_eq!(path.values().len(), 2);
        assert_eq!(
            errors
                .column_by_name("rpc_id")
                .unwrap()
                .as_string::<i32>()
                .value(0),
            "3"
        );
        let moments = records.column_by_name("ingested_at").unwrap();
        assert_eq!(
            moments
                .as_primitive::<arrow_array::types::TimestampMicrosecondType>()
                .values()
                .to_vec(),
            vec![0, 1]
        );
    }

    #[test]
    fn a_copy_gives_its_result_parts_and_claims() {
        let mut rows = FileRows::new(&version("f"), 0, true, Some("/spool".into()));
        let numbers = object(&[
            ("share", Value::Number(Number::Float(0.42))),
            ("n", Value::Number(Number::Int(1210))),
            ("huge", Value::Number(Number::Big("1".repeat(400).into()))),
        ]);
        rows.add_copy(&copy(vec![data_part(numbers.clone()), data_part(numbers)]));
        let batches = made(rows);
        let names: Vec<&str> = batches.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, vec!["results", "parts", "claims"]);
        let results = &batches[0].1;
        assert_eq!(
            results
                .column_by_name("claims")
                .unwrap()
                .as_primitive::<Int32Type>()
                .value(0),
            3
        );
        assert_eq!(
            results
                .column_by_name("origin")
                .unwrap()
                .as_string::<i32>()
                .value(0),
            "/spool"
        );
        let ids = results
            .column_by_name("record_ids")
            .unwrap()
            .as_list::<i32>();
        assert_eq!(ids.value(0).len(), 2);
        let parts = &batches[1].1;
        let data = parts.column_by_name("data").unwrap();
        assert_eq!(
            data.as_string::<i32>().value(0),
            format!("{{\"share\":0.42,\"n\":1210,\"huge\":{}}}", "1".repeat(400))
        );
        let field = parts.schema().field_with_name("data").unwrap().clone();
        assert_eq!(
            field
                .metadata()
                .get("ARROW:extension:name")
                .map(String::as_str),
            Some("arrow.json")
        );
        let claims = &batches[2].1;
        assert_eq!(claims.num_rows(), 6);
        let values = claims.column_by_name("value").unwrap();
        assert_eq!(values.null_count(), 2);
        let part_ids = claims
            .column_by_name("part_id")
            .unwrap()
            .as_dictionary::<Int32Type>();
        assert_eq!(part_ids.keys().values().to_vec(), vec![0, 0, 0, 1, 1, 1]);
        assert_eq!(part_ids.values().len(), 2);
    }

    #[test]
    fn cards_say_whether_they_declare_the_extension() {
        let mut rows = FileRows::new(&version("f"), 0, true, None);
        let card = object(&[
            ("name", Value::Number(Number::Int(5))),
            ("url", Value::String("".into())),
            (
                "supportedInterfaces",
                Value::Array(vec![object(&[("url", Value::String("https://x".into()))])]),
            ),
            (
                "capabilities",
                object(&[(
                    "extensions",
                    Value::Array(vec![object(&[(
                        "uri",
                        Value::String(crate::cite::citations::EXTENSION_URI.into()),
                    )])]),
                )]),
            ),
            ("defaultOutputModes", Value::Array(vec![])),
            (
                "default_output_modes",
                Value::Array(vec![Value::String(
                    crate::cite::citations::MEDIA_TYPE.into(),
                )]),
            ),
        ]);
        rows.add_card("r1", card.as_object().unwrap());
        let batches = made(rows);
        let cards = &batches[0].1;
        assert_eq!(
            cards
                .column_by_name("name")
                .unwrap()
                .as_string::<i32>()
                .value(0),
            "5"
        );
        assert_eq!(
            cards
                .column_by_name("url")
                .unwrap()
                .as_string::<i32>()
                .value(0),
            "https://x"
        );
        assert!(cards
            .column_by_name("declares_extension")
            .unwrap()
            .as_boolean()
            .value(0));
        assert!(cards
            .column_by_name("lists_media_type")
            .unwrap()
            .as_boolean()
            .value(0));
    }
}
