//! Arrow record batches of held rows, typed by the schemas the migrated archive declares: every column
//! as the schema types it (JSON columns as the `arrow.json` extension, a field's metadata kept), the
//! file's constant columns (`source_path`, `source_dir`, `source_sha256`) and the claims' Part columns
//! dictionary-encoded, `ingested_at` the moment of the ingest.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::columns::{dictionary, moments_array, segments, BatchError, Bytes, Column};
use super::rows::{FileConstants, Held, INDEX_TABLES};

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
    let columns = tables.columns();
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
                Some(column) => column.arrays(&cuts, field.data_type())?,
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

    /// A field of the archive's schema from `name` or `name:type` (text when no type is named).
    fn field(declared: &str) -> Field {
        let (name, kind) = declared.split_once(':').unwrap_or((declared, "text"));
        let data_type = match kind {
            "text" | "json" => DataType::Utf8,
            "bytes" => DataType::Binary,
            "i64" => DataType::Int64,
            "i32" => DataType::Int32,
            "f64" => DataType::Float64,
            "bool" => DataType::Boolean,
            "date" => DataType::Date32,
            "moment" => DataType::Timestamp(TimeUnit::Microsecond, Some("Etc/UTC".into())),
            "list" => DataType::List(Arc::new(Field::new("l", DataType::Utf8, true))),
            other => panic!("no type {other}"),
        };
        let field = Field::new(name, data_type, true);
        if kind != "json" {
            return field;
        }
        let metadata = [
            ("ARROW:extension:name".to_owned(), "arrow.json".to_owned()),
            ("ARROW:extension:metadata".to_owned(), String::new()),
        ];
        field.with_metadata(metadata.into_iter().collect::<HashMap<String, String>>())
    }

    /// The archive's schemas as `arrow_schemas` gives them (migrations 0001 to 0010).
    fn schemas() -> Schemas {
        let tables = [
            (
                "records",
                "record_id source_path seq:i64 locator line:i64 byte_offset:i64 kind sha256 \
                 raw:bytes status reason ingested_at:moment source_sha256 yields",
            ),
            (
                "results",
                "copy_id result_key kind task_id context_id message_id state terminal:bool \
                 timestamp:moment source_path source_dir locator record_ids:list claims:i32 \
                 source_sha256 origin",
            ),
            (
                "parts",
                "part_id copy_id result_key source_path role location artifact_id artifact_name \
                 message_id part_index:i32 ordinal:i32 kind media_type content_hash text \
                 data:json file:json metadata:json is_citation:bool source_sha256",
            ),
            (
                "citations",
                "part_id copy_id result_key source_path citation_hash study period fielded \
                 fielded_start:date fielded_end:date base_name base_n:f64 weight source_table \
                 source_column source_function warnings:list extra:json valid:bool problems:list \
                 inferred:bool source_sha256",
            ),
            (
                "claims",
                "part_id pointer copy_id result_key source_path value:f64 literal content_hash \
                 source_sha256 unit stated cell",
            ),
            (
                "agent_cards",
                "card_id source_path source_dir record_id name url declares_extension:bool \
                 lists_media_type:bool card:json source_sha256",
            ),
            (
                "rpc_errors",
                "record_id source_path rpc_id code message source_sha256",
            ),
        ];
        let by_name = tables
            .into_iter()
            .map(|(name, fields)| {
                let fields: Vec<Field> = fields.split_whitespace().map(field).collect();
                (name.to_owned(), Arc::new(Schema::new(fields)))
            })
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

    fn column<'a>(batch: &'a RecordBatch, name: &str) -> &'a ArrayRef {
        batch.column_by_name(name).unwrap()
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
        let path = column(batch, "source_path").as_dictionary::<Int32Type>();
        assert_eq!(path.keys().values().to_vec(), vec![0, 0]);
        assert_eq!(path.values().as_string::<i32>().value(0), "/d/f.jsonl");
        assert_eq!(column(batch, "raw").as_binary::<i32>().value(1), b"x");
        assert_eq!(column(batch, "reason").null_count(), 1);
        let moment = column(batch, "ingested_at");
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
        let dirs = column(records, "source_path").as_dictionary::<Int32Type>();
        assert_eq!(dirs.keys().values().to_vec(), vec![0, 1]);
        let errors = &batches[1].1;
        let path = column(errors, "source_path").as_dictionary::<Int32Type>();
        assert_eq!(path.keys().values().to_vec(), vec![1]);
        assert_eq!(path.values().len(), 2);
        assert_eq!(column(errors, "rpc_id").as_string::<i32>().value(0), "3");
        let moments = column(records, "ingested_at");
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
            column(results, "claims")
                .as_primitive::<Int32Type>()
                .value(0),
            3
        );
        assert_eq!(
            column(results, "origin").as_string::<i32>().value(0),
            "/spool"
        );
        let ids = column(results, "record_ids").as_list::<i32>();
        assert_eq!(ids.value(0).len(), 2);
        let parts = &batches[1].1;
        let data = column(parts, "data");
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
        let values = column(claims, "value");
        assert_eq!(values.null_count(), 2);
        let part_ids = column(claims, "part_id").as_dictionary::<Int32Type>();
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
        assert_eq!(column(cards, "name").as_string::<i32>().value(0), "5");
        assert_eq!(
            column(cards, "url").as_string::<i32>().value(0),
            "https://x"
        );
        assert!(column(cards, "declares_extension").as_boolean().value(0));
        assert!(column(cards, "lists_media_type").as_boolean().value(0));
    }
}
