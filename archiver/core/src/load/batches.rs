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
    let values = values.arrays(&[0..files.len()], &DataType::Utf8)?.remove(0);
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
        part,
        parts,
    } = r;
    let keys: Arc<[i32]> = part.into();
    let count = parts.part_id.len();
    let whole = [0..count];
    let dictionary =
        |name: &'static str, values: Bytes| -> Result<(&'static str, Column), BatchError> {
            let values = values.arrays(&whole, &DataType::Utf8)?.remove(0);
            Ok((name, Column::Dictionary(keys.clone(), values)))
        };
    Ok(vec![
        ("pointer", Column::Bytes(pointer)),
        ("value", Column::Floats(value)),
        ("literal", Column::Bytes(literal)),
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
