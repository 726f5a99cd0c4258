//! A logged command file (`--inputs FILE.csv`, docs/cli.md#commands-over-time): a header
//! `time,NAME,…` then one row per logged instant, the commands of the named actuators at that
//! time (s on the file's own clock). Errors name the file, the line and, for a cell, the
//! column; the names are checked against a scene by `command_schedule`.

use std::path::Path;

use crate::error::{Error, Result};

use super::csv_table::{CsvTable, read_text};
use super::interpolate::{blend, held_weights};

/// A command file as read: row times and one column of commands per actuator name.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandLog {
    /// The file's name as given (in messages and in the final state's `inputs.file`).
    pub file: String,
    /// The rows' times (s, the file's clock): at least one, strictly increasing, finite.
    pub times: Vec<f64>,
    /// The actuator names of the header after `time`, in file order, each once.
    pub names: Vec<String>,
    /// `columns[j][i]`: the command of `names[j]` at `times[i]` (finite; in the command's
    /// own unit, which the actuator's `gain` and `offset` map to its input).
    pub columns: Vec<Vec<f64>>,
}

impl CommandLog {
    /// Reads the command file at `path` ([`CommandLog::parse`]).
    pub fn read(path: &Path) -> Result<CommandLog> {
        let (file, text) = read_text(path)?;
        CommandLog::parse(&file, &text)
    }

    /// Parses command-file text; `file` names it in errors. Comma-separated cells (spaces
    /// around them ignored; a leading byte-order mark and `\r\n` line ends accepted; blank
    /// lines skipped). Line 1 is the header: `time`, then actuator names, none repeated.
    /// Every following non-blank line is a row with as many cells as the header, each a
    /// finite number, times strictly increasing; at least one row.
    pub fn parse(file: &str, text: &str) -> Result<CommandLog> {
        let table = CsvTable::new(file, text);
        let at = |line: usize, message: String| table.error(line, message);
        let (header, cells) = (table.header, &table.columns);
        if cells[0] != "time" {
            return Err(at(
                1,
                format!(
                    "the header must start with `time` then the actuator names (`time,c1,c2`), got `{}`",
                    header.trim()
                ),
            ));
        }
        let mut names: Vec<String> = Vec::new();
        for (k, name) in cells.iter().enumerate().skip(1) {
            if name.is_empty() {
                return Err(at(1, format!("column {}: has no actuator name", k + 1)));
            }
            if let Some(first) = names.iter().position(|n| n == name) {
                return Err(at(
                    1,
                    format!(
                        "column {}: `{name}` is repeated (already column {})",
                        k + 1,
                        first + 2
                    ),
                ));
            }
            names.push(name.to_string());
        }
        let mut times = Vec::new();
        let mut columns = vec![Vec::new(); names.len()];
        for (line, row) in table.rows() {
            if row.len() != cells.len() {
                return Err(at(
                    line,
                    format!(
                        "has {} cells, the header {} (`time` and {} actuator(s))",
                        row.len(),
                        cells.len(),
                        names.len()
                    ),
                ));
            }
            let mut values = Vec::with_capacity(row.len());
            for (k, cell) in row.iter().enumerate() {
                let value: f64 = cell.parse().map_err(|_| {
                    at(
                        line,
                        format!(
                            "column {} (`{}`): `{cell}` is not a number",
                            k + 1,
                            cells[k]
                        ),
                    )
                })?;
                if !value.is_finite() {
                    return Err(at(
                        line,
                        format!("column {} (`{}`): {cell} is not finite", k + 1, cells[k]),
                    ));
                }
                values.push(value);
            }
            if let Some(&previous) = times.last()
                && !(values[0] > previous)
            {
                return Err(at(
                    line,
                    format!(
                        "time {} is not after the previous row's {previous} (times must increase strictly)",
                        values[0]
                    ),
                ));
            }
            times.push(values[0]);
            for (column, v) in columns.iter_mut().zip(&values[1..]) {
                column.push(*v);
            }
        }
        if times.is_empty() {
            return Err(at(
                1,
                "the header is followed by no command row (at least one is needed)".into(),
            ));
        }
        Ok(CommandLog {
            file: file.to_string(),
            times,
            names,
            columns,
        })
    }

    /// A command log from arrays (the Python bindings' `run_commands`): `times` (s) and one
    /// column per actuator name, each as long as `times`. `label` names the input in errors
    /// (`run_commands`), as `LABEL times[3]`, `LABEL commands["c1"][3]`. The same checks as a
    /// file's: at least one time, times finite and strictly increasing, every command finite,
    /// no name twice.
    pub fn from_columns(
        label: &str,
        times: Vec<f64>,
        columns: Vec<(String, Vec<f64>)>,
    ) -> Result<CommandLog> {
        if times.is_empty() {
            return Err(Error::invalid(
                format!("{label} times"),
                "is empty: at least one command time is needed",
            ));
        }
        for (i, t) in times.iter().enumerate() {
            if !t.is_finite() {
                return Err(Error::invalid(
                    format!("{label} times[{i}]"),
                    format!("{t} is not finite"),
                ));
            }
            if i > 0 && !(*t > times[i - 1]) {
                return Err(Error::invalid(
                    format!("{label} times[{i}]"),
                    format!(
                        "{t} is not after times[{}] = {} (times must increase strictly)",
                        i - 1,
                        times[i - 1]
                    ),
                ));
            }
        }
        let mut names: Vec<String> = Vec::new();
        let mut values = Vec::new();
        for (name, column) in columns {
            if names.contains(&name) {
                return Err(Error::invalid(
                    format!("{label} commands[{name:?}]"),
                    "is given twice",
                ));
            }
            if column.len() != times.len() {
                return Err(Error::invalid(
                    format!("{label} commands[{name:?}]"),
                    format!(
                        "has {} values, times {}: one command per time",
                        column.len(),
                        times.len()
                    ),
                ));
            }
            if let Some(i) = column.iter().position(|c| !c.is_finite()) {
                return Err(Error::invalid(
                    format!("{label} commands[{name:?}][{i}]"),
                    format!("{} is not finite", column[i]),
                ));
            }
            names.push(name);
            values.push(column);
        }
        Ok(CommandLog {
            file: label.to_string(),
            times,
            names,
            columns: values,
        })
    }

    /// The first row's time t₀ (s, the file's clock), which is simulation time 0.
    pub fn t0(&self) -> f64 {
        self.times[0]
    }

    /// The last row's time (s, the file's clock).
    pub fn last_time(&self) -> f64 {
        self.times[self.times.len() - 1]
    }

    /// The command of column `column` at file time `t` (s): linear between the two rows
    /// around `t`, held at the first row's before it and at the last row's after it
    /// (`interpolate::held_weights`). A row's own time gives that row's command exactly, and a column
    /// constant between two rows gives that constant exactly.
    pub fn command(&self, column: usize, t: f64) -> f64 {
        blend(&self.columns[column], held_weights(&self.times, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "time,north,west\n0.5,0.0,1.0\n0.7,0.2,1.0\n1.0,0.2,-2.0\n";

    #[test]
    fn a_log_reads_its_header_rows_and_columns() {
        let log = CommandLog::parse("c.csv", LOG).unwrap();
        assert_eq!(log.names, ["north", "west"]);
        assert_eq!(log.times, [0.5, 0.7, 1.0]);
        assert_eq!(log.columns[1], [1.0, 1.0, -2.0]);
        assert_eq!(log.t0(), 0.5);
        assert_eq!(log.last_time(), 1.0);
        // Spaces, a byte-order mark, CRLF and blank lines are accepted.
        let dos =
            "\u{feff}time , north,west\r\n\r\n0.5, 0.0 ,1.0\r\n0.7,0.2,1.0\r\n1.0,0.2,-2.0\r\n\r\n";
        assert_eq!(CommandLog::parse("c.csv", dos).unwrap(), log);
    }

    #[test]
    fn commands_are_linear_between_rows_and_held_outside() {
        let log = CommandLog::parse("c.csv", LOG).unwrap();
        // Held before the first row and after the last.
        assert_eq!(log.command(0, 0.0), 0.0);
        assert_eq!(log.command(1, 0.49), 1.0);
        assert_eq!(log.command(1, 7.0), -2.0);
        // Rows' own times: the rows' values exactly.
        assert_eq!(log.command(0, 0.7), 0.2);
        assert_eq!(log.command(1, 1.0), -2.0);
        // Between rows: by hand, north at 0.6 is halfway from 0 to 0.2, west at 0.85 halfway
        // from 1 to −2, at 0.94 four fifths of the way.
        assert!((log.command(0, 0.6) - 0.1).abs() < 1e-15);
        assert!((log.command(1, 0.85) - (-0.5)).abs() < 1e-15);
        assert!((log.command(1, 0.94) - (-1.4)).abs() < 1e-14);
        // A constant stretch is that constant exactly.
        assert_eq!(log.command(1, 0.6123), 1.0);
        assert_eq!(log.command(0, 0.8765), 0.2);
    }

    fn error(text: &str) -> String {
        CommandLog::parse("cmd.csv", text).unwrap_err().to_string()
    }

    #[test]
    fn each_bad_file_gets_one_line_naming_file_line_and_column() {
        let cases = [
            (
                "t,north\n0,1\n",
                "cmd.csv: line 1: the header must start with `time`",
            ),
            ("", "cmd.csv: line 1: the header must start with `time`"),
            (
                "time,north,north\n0,1,1\n",
                "cmd.csv: line 1: column 3: `north` is repeated (already column 2)",
            ),
            (
                "time,north,\n0,1,1\n",
                "cmd.csv: line 1: column 3: has no actuator name",
            ),
            (
                "time,north\n",
                "cmd.csv: line 1: the header is followed by no command row",
            ),
            (
                "time,north\n0,1\n0.1,1,2\n",
                "cmd.csv: line 3: has 3 cells, the header 2",
            ),
            (
                "time,north\n0,1\n0.1\n",
                "cmd.csv: line 3: has 1 cells, the header 2",
            ),
            (
                "time,north\n0,1\n0.1,abc\n",
                "cmd.csv: line 3: column 2 (`north`): `abc` is not a number",
            ),
            (
                "time,north\n0,1\n0.1,\n",
                "cmd.csv: line 3: column 2 (`north`): `` is not a number",
            ),
            (
                "time,north\n0,nan\n",
                "cmd.csv: line 2: column 2 (`north`): nan is not finite",
            ),
            (
                "time,north\ninf,1\n",
                "cmd.csv: line 2: column 1 (`time`): inf is not finite",
            ),
            (
                "time,north\n0,1\n\n0,2\n",
                "cmd.csv: line 4: time 0 is not after the previous row's 0",
            ),
            (
                "time,north\n0.2,1\n0.1,2\n",
                "cmd.csv: line 3: time 0.1 is not after the previous row's 0.2",
            ),
        ];
        for (text, expected) in cases {
            let e = error(text);
            assert!(e.starts_with(expected), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn arrays_are_checked_as_files_are() {
        let ok = CommandLog::from_columns(
            "run_commands",
            vec![0.0, 0.1],
            vec![("c1".into(), vec![1.0, 2.0])],
        )
        .unwrap();
        assert_eq!(ok.columns, [[1.0, 2.0]]);
        let e = |times: Vec<f64>, columns: Vec<(String, Vec<f64>)>| {
            CommandLog::from_columns("run_commands", times, columns)
                .unwrap_err()
                .to_string()
        };
        assert!(e(vec![], vec![]).starts_with("run_commands times: is empty"));
        assert!(e(vec![0.0, 0.0], vec![]).starts_with("run_commands times[1]: 0 is not after"));
        assert!(e(vec![f64::NAN], vec![]).starts_with("run_commands times[0]: NaN is not finite"));
        assert!(
            e(vec![0.0], vec![("c1".into(), vec![1.0, 2.0])])
                .starts_with("run_commands commands[\"c1\"]: has 2 values, times 1")
        );
        assert!(
            e(vec![0.0], vec![("c1".into(), vec![f64::INFINITY])])
                .starts_with("run_commands commands[\"c1\"][0]: inf is not finite")
        );
        assert!(
            e(
                vec![0.0],
                vec![("c1".into(), vec![1.0]), ("c1".into(), vec![1.0])]
            )
            .starts_with("run_commands commands[\"c1\"]: is given twice")
        );
    }
}
