//! Column builders: the values of one column of held rows, appended in place, becoming an Arrow array of
//! the type the archive's schema gives that column (`batches`). A value of `HUGE_VALUE` bytes or more is
//! kept apart, as the buffer it came in, and becomes an array of its own without being copied.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::builder::BooleanBufferBuilder;
use arrow_array::types::{
    BinaryType, ByteArrayType, Date32Type, Float64Type, Int32Type, Int64Type, LargeBinaryType,
    LargeUtf8Type, TimestampMicrosecondType, Utf8Type,
};
use arrow_array::{
    ArrayRef, BooleanArray, DictionaryArray, GenericByteArray, GenericListArray, OffsetSizeTrait,
    PrimitiveArray,
};
use arrow_buffer::{Buffer, NullBuffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, FieldRef, TimeUnit};

/// A value this large is not copied into a column's shared buffer: it becomes an array of its own (a
/// 300 MB record or file Part would otherwise be in memory twice).
pub const HUGE_VALUE: usize = 4 * (1 << 20);

/// Why held rows could not become an Arrow batch.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchError(pub String);

type Built = Result<ArrayRef, BatchError>;
/// A column's arrays, one per segment of its rows.
pub type Arrays = Result<Vec<ArrayRef>, BatchError>;

fn mismatch(kind: &str, data_type: &DataType) -> BatchError {
    BatchError(format!("a column of {kind} cannot be typed {data_type}"))
}

/// Text or bytes (strings, JSON text, raw records): one shared buffer, huge values apart.
pub struct Bytes {
    data: Vec<u8>,
    /// The end of each row's value in `data` (a huge value's row takes no bytes there).
    ends: Vec<usize>,
    nulls: NullBufferBuilder,
    /// (row, value) of the values of `HUGE_VALUE` bytes or more, in row order.
    huge: Vec<(usize, Vec<u8>)>,
}

impl Default for Bytes {
    fn default() -> Self {
        Bytes {
            data: Vec::new(),
            ends: Vec::new(),
            nulls: NullBufferBuilder::new(0),
            huge: Vec::new(),
        }
    }
}

impl Bytes {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn end(&self) -> usize {
        self.data.len()
    }

    pub fn push(&mut self, value: &[u8]) {
        self.data.extend_from_slice(value);
        self.ends.push(self.end());
        self.nulls.append_non_null();
    }

    pub fn push_str(&mut self, value: &str) {
        self.push(value.as_bytes());
    }

    /// A value made for this column: a huge one is kept as it is, not copied.
    pub fn push_owned(&mut self, value: Vec<u8>) {
        if value.len() < HUGE_VALUE {
            return self.push(&value);
        }
        self.huge.push((self.len(), value));
        self.ends.push(self.end());
        self.nulls.append_non_null();
    }

    pub fn push_null(&mut self) {
        self.ends.push(self.end());
        self.nulls.append_null();
    }

    pub fn push_opt(&mut self, value: Option<&str>) {
        match value {
            Some(text) => self.push_str(text),
            None => self.push_null(),
        }
    }

    pub fn push_opt_owned(&mut self, value: Option<Vec<u8>>) {
        match value {
            Some(bytes) => self.push_owned(bytes),
            None => self.push_null(),
        }
    }

    /// Take every value of `other`, after this column's.
    pub fn append(&mut self, other: Bytes) {
        let (rows, base) = (self.len(), self.end());
        self.data.extend_from_slice(&other.data);
        self.ends.extend(other.ends.iter().map(|end| end + base));
        append_nulls(&mut self.nulls, other.nulls, other.ends.len());
        self.huge.extend(
            other
                .huge
                .into_iter()
                .map(|(row, value)| (row + rows, value)),
        );
    }

    /// The rows that hold a huge value.
    pub fn huge_rows(&self) -> impl Iterator<Item = usize> + '_ {
        self.huge.iter().map(|(row, _)| *row)
    }

    /// Bytes of the shared buffer the rows of `rows` take.
    pub fn span(&self, rows: Range<usize>) -> usize {
        bounds(&self.ends, &rows).len()
    }

    /// The whole column as one Arrow array of `data_type`.
    pub fn array(self, data_type: &DataType) -> Built {
        let all = 0..self.len();
        let mut arrays = self.arrays(std::slice::from_ref(&all), data_type)?;
        arrays
            .pop()
            .ok_or_else(|| BatchError("no array made".to_owned()))
    }

    /// The column as Arrow arrays of `data_type`, one per range of `segments` (which cover the rows in
    /// order; a huge value's row is a segment of its own).
    pub fn arrays(self, segments: &[Range<usize>], data_type: &DataType) -> Arrays {
        let Bytes {
            data,
            ends,
            mut nulls,
            huge,
        } = self;
        let nulls = nulls.finish();
        let shared = Buffer::from_vec(data);
        let mut huge = huge.into_iter().peekable();
        let mut arrays = Vec::with_capacity(segments.len());
        for rows in segments {
            let nulls = nulls.as_ref().map(|all| all.slice(rows.start, rows.len()));
            let lone = huge.next_if(|(row, _)| rows.len() == 1 && *row == rows.start);
            let (values, lengths): (Buffer, Vec<usize>) = match lone {
                Some((_, value)) => {
                    let length = value.len();
                    (Buffer::from_vec(value), vec![length])
                }
                None => {
                    let span = bounds(&ends, rows);
                    let values = shared.slice_with_length(span.start, span.len());
                    (values, lengths(&ends, rows))
                }
            };
            arrays.push(byte_array(values, &lengths, nulls, data_type)?);
        }
        Ok(arrays)
    }
}

/// Where the values of `rows` begin and end, from the end of each row's value.
fn bounds(ends: &[usize], rows: &Range<usize>) -> Range<usize> {
    let end_before = |row: usize| row.checked_sub(1).map_or(0, |last| ends[last]);
    end_before(rows.start)..end_before(rows.end)
}

/// The length of each row's value in `rows`, from the end of each row's value.
fn lengths(ends: &[usize], rows: &Range<usize>) -> Vec<usize> {
    let mut previous = bounds(ends, rows).start;
    ends[rows.clone()]
        .iter()
        .map(|&end| end - std::mem::replace(&mut previous, end))
        .collect()
}

fn byte_array(
    values: Buffer,
    lengths: &[usize],
    nulls: Option<NullBuffer>,
    data_type: &DataType,
) -> Built {
    let large = || OffsetBuffer::from_lengths(lengths.iter().copied());
    match data_type {
        DataType::Utf8 => bytes_of::<Utf8Type>(offsets32(lengths)?, values, nulls),
        DataType::Binary => bytes_of::<BinaryType>(offsets32(lengths)?, values, nulls),
        DataType::LargeUtf8 => bytes_of::<LargeUtf8Type>(large(), values, nulls),
        DataType::LargeBinary => bytes_of::<LargeBinaryType>(large(), values, nulls),
        other => Err(mismatch("text", other)),
    }
}

fn bytes_of<T: ByteArrayType>(
    offsets: OffsetBuffer<T::Offset>,
    values: Buffer,
    nulls: Option<NullBuffer>,
) -> Built {
    GenericByteArray::<T>::try_new(offsets, values, nulls)
        .map(|array| Arc::new(array) as ArrayRef)
        .map_err(|e| BatchError(e.to_string()))
}

fn offsets32(lengths: &[usize]) -> Result<OffsetBuffer<i32>, BatchError> {
    let total: usize = lengths.iter().sum();
    if i32::try_from(total).is_err() {
        return Err(BatchError(format!(
            "{total} bytes in one column of one batch"
        )));
    }
    Ok(OffsetBuffer::from_lengths(lengths.iter().copied()))
}

fn append_nulls(nulls: &mut NullBufferBuilder, mut other: NullBufferBuilder, len: usize) {
    match other.finish() {
        Some(buffer) => nulls.append_buffer(&buffer),
        None => nulls.append_n_non_nulls(len),
    }
}

/// Nullable values of one kind, held in place; `K` says how they become an Arrow array.
pub struct Nullable<K: Kind> {
    values: Vec<K::Value>,
    nulls: NullBufferBuilder,
}

/// How held values of one kind become an Arrow array of the type the schema gives their column.
pub trait Kind {
    type Value: Copy + Default;
    fn array(values: &[Self::Value], nulls: Option<NullBuffer>, data_type: &DataType) -> Built;
}

/// Integers (counts, positions, offsets), typed Int64 or Int32 by the schema.
pub type Ints = Nullable<Integer>;
/// Microseconds since 1970-01-01 UTC (moments), or days since then (dates): Arrow's timestamp and date32.
pub type Moments = Nullable<Moment>;
/// Doubles.
pub type Floats = Nullable<Double>;

pub enum Integer {}
pub enum Moment {}
pub enum Double {}

impl Kind for Integer {
    type Value = i64;

    fn array(values: &[i64], nulls: Option<NullBuffer>, data_type: &DataType) -> Built {
        Ok(match data_type {
            DataType::Int64 => Arc::new(PrimitiveArray::<Int64Type>::new(
                ScalarBuffer::from(values.to_vec()),
                nulls,
            )),
            DataType::Int32 => {
                let narrow =
                    narrowed(values, |value| format!("{value} is beyond a 32-bit column"))?;
                Arc::new(PrimitiveArray::<Int32Type>::new(narrow, nulls))
            }
            other => return Err(mismatch("integers", other)),
        })
    }
}

impl Kind for Moment {
    type Value = i64;

    fn array(values: &[i64], nulls: Option<NullBuffer>, data_type: &DataType) -> Built {
        moments_array(values.to_vec(), nulls, data_type)
    }
}

impl Kind for Double {
    type Value = f64;

    fn array(values: &[f64], nulls: Option<NullBuffer>, data_type: &DataType) -> Built {
        if *data_type != DataType::Float64 {
            return Err(mismatch("doubles", data_type));
        }
        Ok(Arc::new(PrimitiveArray::<Float64Type>::new(
            ScalarBuffer::from(values.to_vec()),
            nulls,
        )))
    }
}

impl<K: Kind> Default for Nullable<K> {
    fn default() -> Self {
        Nullable {
            values: Vec::new(),
            nulls: NullBufferBuilder::new(0),
        }
    }
}

impl<K: Kind> Nullable<K> {
    pub fn push(&mut self, value: K::Value) {
        self.values.push(value);
        self.nulls.append_non_null();
    }

    pub fn push_opt(&mut self, value: Option<K::Value>) {
        self.values.push(value.unwrap_or_default());
        self.nulls.append(value.is_some());
    }

    pub fn append(&mut self, other: Nullable<K>) {
        let len = other.values.len();
        self.values.extend(other.values);
        append_nulls(&mut self.nulls, other.nulls, len);
    }

    pub fn arrays(mut self, segments: &[Range<usize>], data_type: &DataType) -> Arrays {
        let nulls = self.nulls.finish();
        segments
            .iter()
            .map(|rows| {
                let nulls = nulls.as_ref().map(|all| all.slice(rows.start, rows.len()));
                K::array(&self.values[rows.clone()], nulls, data_type)
            })
            .collect()
    }
}

/// Moments (microseconds) or dates (days) as an array of `data_type`.
pub fn moments_array(values: Vec<i64>, nulls: Option<NullBuffer>, data_type: &DataType) -> Built {
    Ok(match data_type {
        DataType::Timestamp(TimeUnit::Microsecond, zone) => Arc::new(
            PrimitiveArray::<TimestampMicrosecondType>::new(ScalarBuffer::from(values), nulls)
                .with_timezone_opt(zone.clone()),
        ),
        DataType::Date32 => {
            let days = narrowed(&values, |day| format!("day {day} is beyond a date32"))?;
            Arc::new(PrimitiveArray::<Date32Type>::new(days, nulls))
        }
        other => return Err(mismatch("moments", other)),
    })
}

/// 64-bit values as 32-bit ones; one that does not fit is an error `beyond` words.
fn narrowed(
    values: &[i64],
    beyond: impl Fn(i64) -> String,
) -> Result<ScalarBuffer<i32>, BatchError> {
    values
        .iter()
        .map(|&value| i32::try_from(value).map_err(|_| BatchError(beyond(value))))
        .collect::<Result<Vec<i32>, _>>()
        .map(ScalarBuffer::from)
}

/// Booleans (never null in the archive's rows).
pub struct Flags {
    values: BooleanBufferBuilder,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            values: BooleanBufferBuilder::new(0),
        }
    }
}

impl Flags {
    pub fn push(&mut self, value: bool) {
        self.values.append(value);
    }

    pub fn append(&mut self, other: Flags) {
        let mut other = other;
        self.values.append_buffer(&other.values.finish());
    }

    pub fn arrays(mut self, segments: &[Range<usize>], data_type: &DataType) -> Arrays {
        if *data_type != DataType::Boolean {
            return Err(mismatch("booleans", data_type));
        }
        let all = self.values.finish();
        Ok(segments
            .iter()
            .map(|rows| {
                Arc::new(BooleanArray::new(all.slice(rows.start, rows.len()), None)) as ArrayRef
            })
            .collect())
    }
}

/// Lists of text (`record_ids`, `warnings`, `problems`); never null in the archive's rows.
#[derive(Default)]
pub struct TextLists {
    items: Bytes,
    /// The end of each row's list in `items`.
    ends: Vec<usize>,
}

impl TextLists {
    pub fn push<'a>(&mut self, items: impl IntoIterator<Item = &'a str>) {
        for item in items {
            self.items.push_str(item);
        }
        self.ends.push(self.items.len());
    }

    pub fn append(&mut self, other: TextLists) {
        let base = self.items.len();
        self.items.append(other.items);
        self.ends.extend(other.ends.iter().map(|end| end + base));
    }

    pub fn arrays(self, segments: &[Range<usize>], data_type: &DataType) -> Arrays {
        let (item_field, large) = match data_type {
            DataType::List(field) => (field.clone(), false),
            DataType::LargeList(field) => (field.clone(), true),
            other => return Err(mismatch("lists of text", other)),
        };
        let item_segments: Vec<Range<usize>> = segments
            .iter()
            .map(|rows| bounds(&self.ends, rows))
            .collect();
        let ends = self.ends;
        let items = self.items.arrays(&item_segments, item_field.data_type())?;
        segments
            .iter()
            .zip(items)
            .map(|(rows, items)| {
                let lengths = lengths(&ends, rows);
                if large {
                    list_of::<i64>(item_field.clone(), &lengths, items)
                } else {
                    list_of::<i32>(item_field.clone(), &lengths, items)
                }
            })
            .collect()
    }
}

fn list_of<O: OffsetSizeTrait>(item: FieldRef, lengths: &[usize], items: ArrayRef) -> Built {
    let offsets = OffsetBuffer::<O>::from_lengths(lengths.iter().copied());
    GenericListArray::<O>::try_new(item, offsets, items, None)
        .map(|array| Arc::new(array) as ArrayRef)
        .map_err(|e| BatchError(e.to_string()))
}

/// One column of held rows, whatever its values: each variant named as the column builder it holds.
pub enum Column {
    Bytes(Bytes),
    Ints(Ints),
    Floats(Floats),
    Flags(Flags),
    Moments(Moments),
    TextLists(TextLists),
    /// Text values, one per key, and each row's key (a claim's Part column): a dictionary.
    Keyed(Arc<[i32]>, Bytes),
}

impl Column {
    /// The column as Arrow arrays of `data_type`, one per range of `segments`.
    pub fn arrays(self, segments: &[Range<usize>], data_type: &DataType) -> Arrays {
        match self {
            Column::Bytes(bytes) => bytes.arrays(segments, data_type),
            Column::Ints(ints) => ints.arrays(segments, data_type),
            Column::Floats(floats) => floats.arrays(segments, data_type),
            Column::Flags(flags) => flags.arrays(segments, data_type),
            Column::Moments(moments) => moments.arrays(segments, data_type),
            Column::TextLists(lists) => lists.arrays(segments, data_type),
            Column::Keyed(keys, values) => {
                let values = values.array(&DataType::Utf8)?;
                segments
                    .iter()
                    .map(|rows| dictionary(&keys[rows.clone()], &values))
                    .collect()
            }
        }
    }
}

/// An array of the `values` that `keys` index.
pub fn dictionary(keys: &[i32], values: &ArrayRef) -> Built {
    let keys = PrimitiveArray::<Int32Type>::new(ScalarBuffer::from(keys.to_vec()), None);
    DictionaryArray::try_new(keys, values.clone())
        .map(|array| Arc::new(array) as ArrayRef)
        .map_err(|e| BatchError(e.to_string()))
}

/// The ranges of `len` rows a batch is cut into: a row holding a huge value alone (so that the value
/// becomes its array's buffer without a copy), and no more than `max_span` bytes of one column's shared
/// buffer in one range (Arrow's 32-bit offsets).
pub fn segments(
    len: usize,
    huge_rows: &[usize],
    spans: &dyn Fn(Range<usize>) -> usize,
    max_span: usize,
) -> Vec<Range<usize>> {
    let mut cuts = Vec::new();
    let mut start = 0;
    let mut huge = huge_rows.iter().copied().peekable();
    let mut row = 0;
    while row < len {
        if huge.peek() == Some(&row) {
            while huge.peek() == Some(&row) {
                huge.next();
            }
            if start < row {
                cuts.push(start..row);
            }
            cuts.push(row..row + 1);
            start = row + 1;
        } else if row > start && spans(start..row + 1) > max_span {
            cuts.push(start..row);
            start = row;
        }
        row += 1;
    }
    if start < len || cuts.is_empty() {
        cuts.push(start..len);
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    #[test]
    fn huge_values_are_segments_of_their_own() {
        let spans = |_: Range<usize>| 0;
        assert_eq!(segments(5, &[], &spans, 10), vec![0..5]);
        assert_eq!(
            segments(5, &[0, 3], &spans, 10),
            vec![0..1, 1..3, 3..4, 4..5]
        );
        assert_eq!(segments(2, &[1, 1], &spans, 10), vec![0..1, 1..2]);
        assert_eq!(segments(0, &[], &spans, 10), vec![0..0]);
    }

    #[test]
    fn long_columns_are_cut() {
        let spans = |rows: Range<usize>| rows.len() * 4;
        assert_eq!(segments(5, &[], &spans, 8), vec![0..2, 2..4, 4..5]);
    }

    #[test]
    fn text_columns_become_arrays_with_nulls_and_huge_values_apart() {
        let mut column = Bytes::default();
        column.push_str("a");
        column.push_null();
        column.push_owned(vec![b'x'; HUGE_VALUE]);
        column.push_str("bc");
        let huge: Vec<usize> = column.huge_rows().collect();
        assert_eq!(huge, vec![2]);
        let arrays = column.arrays(&[0..2, 2..3, 3..4], &DataType::Utf8).unwrap();
        let first = arrays[0]
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!(first.iter().collect::<Vec<_>>(), vec![Some("a"), None]);
        assert_eq!(arrays[1].len(), 1);
        let last = arrays[2]
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!(last.value(0), "bc");
    }

    #[test]
    fn appended_columns_keep_their_nulls() {
        let mut first = Ints::default();
        first.push(1);
        let mut second = Ints::default();
        second.push_opt(None);
        second.push(3);
        first.append(second);
        let arrays = first
            .arrays(std::slice::from_ref(&(0..3)), &DataType::Int32)
            .unwrap();
        assert_eq!(arrays[0].null_count(), 1);
        assert_eq!(arrays[0].len(), 3);
    }
}
