//! Figures: one printed line each (value, target, verdict) and the same in JSON.

use std::path::Path;

use serde::Serialize;
use serde_json::{json, Value};

/// Which way is better for a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
}

/// A target: `on` (the median, the tail or the single value) compared with `limit`.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// `">="`, `"<="` or `"<"`.
    pub op: &'static str,
    pub limit: f64,
    /// `median`, `p99` or `value`.
    pub on: &'static str,
}

impl Target {
    pub fn at_least(limit: f64, on: &'static str) -> Target {
        Target {
            op: ">=",
            limit,
            on,
        }
    }

    pub fn below(limit: f64, on: &'static str) -> Target {
        Target { op: "<", limit, on }
    }

    pub fn at_most(limit: f64, on: &'static str) -> Target {
        Target {
            op: "<=",
            limit,
            on,
        }
    }

    fn check(&self, value: f64) -> bool {
        match self.op {
            ">=" => value >= self.limit,
            "<=" => value <= self.limit,
            _ => value < self.limit,
        }
    }
}

/// One figure.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub id: String,
    pub label: String,
    pub unit: String,
    pub better: Better,
    /// Median over `runs` (distributions), or the single value.
    pub median: Option<f64>,
    /// The 99th percentile on the bad side: the 99th for "lower is better", the 1st for
    /// "higher is better" (the worst 1 % of runs).
    pub p99: Option<f64>,
    pub runs: usize,
    pub target: Option<Target>,
    pub met: Option<bool>,
    pub note: String,
}

impl Figure {
    /// A distribution over runs.
    pub fn dist(id: &str, label: &str, unit: &str, better: Better, values: &[f64]) -> Figure {
        let (median, p99) = summarize(values, better);
        Figure {
            id: id.to_string(),
            label: label.to_string(),
            unit: unit.to_string(),
            better,
            median,
            p99,
            runs: values.len(),
            target: None,
            met: None,
            note: String::new(),
        }
    }

    /// A single measured value.
    pub fn value(id: &str, label: &str, unit: &str, better: Better, value: f64) -> Figure {
        Figure {
            id: id.to_string(),
            label: label.to_string(),
            unit: unit.to_string(),
            better,
            median: Some(value),
            p99: None,
            runs: 1,
            target: None,
            met: None,
            note: String::new(),
        }
    }

    pub fn target(mut self, target: Target) -> Figure {
        let value = match target.on {
            "p99" => self.p99,
            _ => self.median,
        };
        self.met = value.map(|v| target.check(v));
        self.target = Some(target);
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Figure {
        self.note = note.into();
        self
    }

    /// The printed line.
    pub fn line(&self) -> String {
        let value = match (self.median, self.p99) {
            (Some(m), Some(p)) => format!("median {:>10} p99 {:>10}", num(m), num(p)),
            (Some(m), None) => format!("{:>10}{:>26}", num(m), ""),
            _ => format!("{:>36}", "n/a"),
        };
        let target = match (&self.target, self.met) {
            (Some(t), Some(met)) => format!(
                "target {} {} ({}) {}",
                t.op,
                num(t.limit),
                t.on,
                if met { "MET" } else { "NOT MET" }
            ),
            (Some(t), None) => format!("target {} {} ({}) n/a", t.op, num(t.limit), t.on),
            (None, _) => String::new(),
        };
        format!(
            "{:<52} {value} {:<10} {target}",
            self.label,
            self.unit,
            target = target
        )
    }
}

/// Median and the bad-side 99th percentile (nearest rank).
pub fn summarize(values: &[f64], better: Better) -> (Option<f64>, Option<f64>) {
    if values.is_empty() {
        return (None, None);
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    let median = if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    };
    let tail = match better {
        Better::Lower => percentile(&sorted, 99.0),
        Better::Higher => percentile(&sorted, 1.0),
    };
    (Some(median), Some(tail))
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".to_string()
    } else if a >= 100_000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

/// All figures of a run, printed as they come and written as JSON at the end.
#[derive(Debug, Default)]
pub struct Report {
    pub figures: Vec<Figure>,
    pub sections: Vec<(String, Value)>,
}

impl Report {
    pub fn add(&mut self, figure: Figure) {
        println!("{}", figure.line());
        if !figure.note.is_empty() {
            println!("    {}", figure.note);
        }
        self.figures.push(figure);
    }

    /// Extra raw data of a section (kept in the JSON only).
    pub fn detail(&mut self, section: &str, value: Value) {
        self.sections.push((section.to_string(), value));
    }

    pub fn write(&self, path: &Path, meta: Value) -> anyhow::Result<()> {
        let details: serde_json::Map<String, Value> = self.sections.iter().cloned().collect();
        let not_met: Vec<&str> = self
            .figures
            .iter()
            .filter(|f| f.met == Some(false))
            .map(|f| f.id.as_str())
            .collect();
        let doc = json!({
            "meta": meta,
            "figures": self.figures,
            "not_met": not_met,
            "details": details,
        });
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_vec_pretty(&doc)?)?;
        Ok(())
    }
}
