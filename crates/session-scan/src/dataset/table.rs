//! One table of the dataset as Parquet files: its columns, the rows buffered for the next row
//! group, and the files they go to, each written under a temporary name and renamed when whole.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

/// The version of the tables' schema, in every file's metadata (`session_scan.schema_version`);
/// it grows when a column is added, and a column is never renamed or dropped.
pub const SCHEMA_VERSION: &str = "1";

/// What a column holds, as every engine reads it: no unsigned integers, times in UTC milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text.
    Text,
    /// A signed 64-bit integer.
    Int,
    /// A 64-bit float.
    Float,
    /// A boolean.
    Bool,
    /// An instant: milliseconds since the epoch, UTC.
    Time,
}

/// A column: its name, kind, and whether it may be null.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Whether a row may lack it.
    pub nullable: bool,
}

/// Shorthands for the tables' column lists.
pub const fn col(name: &'static str, kind: Kind) -> Column {
    Column { name, kind, nullable: true }
}

/// A column every row has.
pub const fn required(name: &'static str, kind: Kind) -> Column {
    Column { name, kind, nullable: false }
}

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// No value.
    Null,
    /// Text.
    Text(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// An instant in ms (not finite: null).
    Time(f64),
}

impl Cell {
    /// Text, or null when there is none.
    pub fn text_or_null(s: Option<impl Into<String>>) -> Cell {
        s.map_or(Cell::Null, |s| Cell::Text(s.into()))
    }
}

/// The Parquet schema of a table.
fn schema(table: &str, columns: &[Column]) -> parquet::errors::Result<Type> {
    let mut text = format!("message {table} {{\n");
    for c in columns {
        let repetition = if c.nullable { "optional" } else { "required" };
        let physical = match c.kind {
            Kind::Text => "binary",
            Kind::Int | Kind::Time => "int64",
            Kind::Float => "double",
            Kind::Bool => "boolean",
        };
        let logical = match c.kind {
            Kind::Text => " (STRING)",
            Kind::Time => " (TIMESTAMP(MILLIS,true))",
            _ => "",
        };
        text.push_str(&format!("  {repetition} {physical} {}{logical};\n", c.name));
    }
    text.push('}');
    parquet::schema::parser::parse_message_type(&text)
}

/// Values of one column for the rows buffered.
enum Values {
    Text(Vec<ByteArray>),
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
}

/// A table's writer into one folder: rows are buffered up to a row group, row groups go to the
/// current file, and a file is closed at `rows_per_file` rows. Files are named
/// `part-GROUP-NNNNN.parquet` and written as `.part-GROUP-NNNNN.parquet.tmp` until [`TableWriter::finish`]
/// renames them.
pub struct TableWriter {
    name: &'static str,
    columns: &'static [Column],
    folder: PathBuf,
    schema: Arc<Type>,
    properties: Arc<WriterProperties>,
    rows: Vec<Vec<Cell>>,
    file: Option<(SerializedFileWriter<File>, PathBuf)>,
    rows_in_file: usize,
    written: Vec<PathBuf>,
    /// The group of sessions whose rows these files hold, in their names.
    group: String,
    /// The number of the first file.
    first: usize,
    /// Rows written in all.
    pub row_count: u64,
    /// About how many bytes the rows buffered hold.
    pub buffered_bytes: usize,
}

/// Rows per row group: large enough for good compression, small enough to hold in memory.
const ROWS_PER_GROUP: usize = 65_536;
/// Rows per file: files of tens of megabytes, a size engines split work by.
const ROWS_PER_FILE: usize = 4 * ROWS_PER_GROUP * 4;

impl TableWriter {
    /// A writer of table `name` into `folder` (created when the first row group is written).
    pub fn new(
        name: &'static str,
        columns: &'static [Column],
        folder: PathBuf,
        group: String,
        first: usize,
    ) -> anyhow::Result<TableWriter> {
        let schema = Arc::new(schema(name, columns)?);
        let metadata = vec![
            KeyValue::new("session_scan.schema_version".to_owned(), SCHEMA_VERSION.to_owned()),
            KeyValue::new("session_scan.table".to_owned(), name.to_owned()),
        ];
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("session-scan {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(metadata))
            .build();
        Ok(TableWriter {
            name,
            columns,
            folder,
            schema,
            properties: Arc::new(properties),
            rows: Vec::new(),
            file: None,
            rows_in_file: 0,
            written: Vec::new(),
            group,
            first,
            row_count: 0,
            buffered_bytes: 0,
        })
    }

    /// The table's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Adds a row (its cells in the order of the columns).
    pub fn push(&mut self, row: Vec<Cell>) -> anyhow::Result<()> {
        debug_assert_eq!(row.len(), self.columns.len(), "{}", self.name);
        self.buffered_bytes += row_bytes(&row);
        self.rows.push(row);
        self.row_count += 1;
        if self.rows.len() >= ROWS_PER_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the rows buffered as a row group.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        if self.file.is_none() {
            std::fs::create_dir_all(&self.folder)?;
            let n = self.first + self.written.len();
            let temporary = self.folder.join(format!(".part-{}-{n:05}.parquet.tmp", self.group));
            let file = File::create(&temporary)?;
            let writer = SerializedFileWriter::new(file, self.schema.clone(), self.properties.clone())?;
            self.file = Some((writer, temporary));
            self.rows_in_file = 0;
        }
        let rows = std::mem::take(&mut self.rows);
        self.buffered_bytes = 0;
        let Some((writer, _)) = self.file.as_mut() else { unreachable!("a file was opened above") };
        let mut group = writer.next_row_group()?;
        for (k, column) in self.columns.iter().enumerate() {
            let mut levels: Vec<i16> = Vec::with_capacity(rows.len());
            let mut values = match column.kind {
                Kind::Text => Values::Text(Vec::with_capacity(rows.len())),
                Kind::Int | Kind::Time => Values::Int(Vec::with_capacity(rows.len())),
                Kind::Float => Values::Float(Vec::with_capacity(rows.len())),
                Kind::Bool => Values::Bool(Vec::with_capacity(rows.len())),
            };
            for row in &rows {
                let present = match (&row[k], &mut values) {
                    (Cell::Text(s), Values::Text(v)) => {
                        v.push(ByteArray::from(s.as_bytes().to_vec()));
                        true
                    }
                    (Cell::Int(i), Values::Int(v)) => {
                        v.push(*i);
                        true
                    }
                    (Cell::Time(ms), Values::Int(v)) if ms.is_finite() => {
                        v.push(*ms as i64);
                        true
                    }
                    (Cell::Float(f), Values::Float(v)) => {
                        v.push(*f);
                        true
                    }
                    (Cell::Bool(b), Values::Bool(v)) => {
                        v.push(*b);
                        true
                    }
                    (Cell::Null | Cell::Time(_), _) if column.nullable => false,
                    (cell, _) => anyhow::bail!("{}.{}: {cell:?} does not fit the column", self.name, column.name),
                };
                levels.push(i16::from(present));
            }
            let levels = column.nullable.then_some(&levels[..]);
            let Some(mut out) = group.next_column()? else { anyhow::bail!("{}: fewer columns than cells", self.name) };
            match &values {
                Values::Text(v) => out.typed::<ByteArrayType>().write_batch(v, levels, None)?,
                Values::Int(v) => out.typed::<Int64Type>().write_batch(v, levels, None)?,
                Values::Float(v) => out.typed::<DoubleType>().write_batch(v, levels, None)?,
                Values::Bool(v) => out.typed::<BoolType>().write_batch(v, levels, None)?,
            };
            out.close()?;
        }
        group.close()?;
        self.rows_in_file += rows.len();
        if self.rows_in_file >= ROWS_PER_FILE {
            self.close_file()?;
        }
        Ok(())
    }

    fn close_file(&mut self) -> anyhow::Result<()> {
        if let Some((writer, temporary)) = self.file.take() {
            let file = writer.into_inner()?;
            file.sync_all()?;
            self.written.push(temporary);
        }
        Ok(())
    }

    /// Writes what is buffered and closes the last file; gives the files written, still under
    /// their temporary names, with the names they take.
    pub fn finish(mut self) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
        self.flush()?;
        self.close_file()?;
        Ok(self
            .written
            .iter()
            .enumerate()
            .map(|(n, temporary)| (temporary.clone(), final_name(&self.folder, &self.group, self.first + n)))
            .collect())
    }
}

/// About how many bytes a row holds in memory.
fn row_bytes(row: &[Cell]) -> usize {
    std::mem::size_of::<Vec<Cell>>()
        + row
            .iter()
            .map(|c| std::mem::size_of::<Cell>() + if let Cell::Text(s) = c { s.capacity() } else { 0 })
            .sum::<usize>()
}

/// The name a table's `n`-th file of a group takes in `folder`.
pub fn final_name(folder: &Path, group: &str, n: usize) -> PathBuf {
    folder.join(format!("part-{group}-{n:05}.parquet"))
}
