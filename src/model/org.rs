//! Organizations: who certifies, with which identity, on which device, under which plan.

use serde::{Deserialize, Serialize};

/// An organization's id: short, lowercase ASCII letters, digits and `-` (e.g. `demo`).
pub type OrgId = String;

/// The commercial plan; its annual quota comes from the configuration unless the organization
/// overrides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Plan {
    /// The small plan.
    Start,
    /// The larger plan.
    Grow,
}

impl Plan {
    /// The name used in the CLI and the configuration: `start` or `grow`.
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Start => "start",
            Plan::Grow => "grow",
        }
    }

    /// Parses `start` or `grow` (any case).
    pub fn parse(text: &str) -> Option<Plan> {
        match text.to_ascii_lowercase().as_str() {
            "start" => Some(Plan::Start),
            "grow" => Some(Plan::Grow),
            _ => None,
        }
    }
}

/// Which register and device a key certifies into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Environment {
    /// `mcf_live_` keys: the organization's fiscal device, its quota and LogInvoices.
    Production,
    /// `mcf_test_` keys: the sandbox device (a simulator), a separate register, no quota.
    Sandbox,
}

impl Environment {
    /// `production` or `sandbox`.
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Production => "production",
            Environment::Sandbox => "sandbox",
        }
    }
}

/// An organization, as last saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Organization {
    /// Its id.
    pub id: OrgId,
    /// Display name.
    pub name: String,
    /// Seller tax number (NIF); must equal the NIF of its device.
    pub nif: String,
    /// Seller ISF identifier.
    pub isf: String,
    /// Plan.
    pub plan: Plan,
    /// Annual quota overriding the plan's, if any.
    pub quota_override: Option<u64>,
    /// Name of the configured device it certifies on.
    pub device: String,
}
