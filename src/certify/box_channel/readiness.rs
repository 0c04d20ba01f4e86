//! "Status is the truth" for a box: whether an invoice could be certified on it now, and if
//! not why, in words shown on the dashboard, in `/metrics` and in the log. A box is ready
//! when its link answers, nothing it says stops certification (its state readable, its fiscal
//! memory not full, its DGI link not overdue: `LinkStatus::blocked`), every organization
//! bound to it has the NIF the box is personalized for, and no earlier invoice of it waits to
//! be settled.

use crate::certify::status::Problem;
use crate::device::LinkStatus;
use crate::model::Organization;
use crate::msg;

/// Why `device` (configured, with link `status`) could not certify now for the organizations
/// `organizations` (those bound to it are checked); `None` when it could.
pub(crate) fn problem(
    device: &str,
    status: &LinkStatus,
    organizations: &[Organization],
    settling: bool,
) -> Option<Problem> {
    let problem = |code, text| {
        Some(Problem {
            code,
            channel: "box",
            text,
        })
    };
    if !status.connected {
        return problem(
            "link_down",
            match status.last_error.as_deref() {
                Some(why) => msg!("problem-box-down", detail = why),
                None => msg!("problem-box-not-connected-yet"),
            },
        );
    }
    if let Some(blocked) = &status.blocked {
        return problem(
            "box_blocked",
            msg!("problem-box-blocked", why = blocked.clone()),
        );
    }
    if let Some(state) = &status.state {
        let foreign = organizations
            .iter()
            .filter(|org| org.device == device && org.nif != state.nif)
            .map(|org| format!("{} ({})", org.id, org.nif))
            .collect::<Vec<_>>();
        if !foreign.is_empty() {
            return problem(
                "nif_mismatch",
                msg!(
                    "problem-box-nif-mismatch",
                    nif = state.nif.as_str(),
                    organizations = foreign.join(", ")
                ),
            );
        }
    }
    if settling {
        return problem("settling", msg!("problem-box-settling"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Plan;

    fn org(id: &str, nif: &str) -> Organization {
        Organization {
            id: id.into(),
            name: id.into(),
            nif: nif.into(),
            isf: "ISF".into(),
            plan: Plan::Start,
            quota_override: None,
            device: "shop".into(),
            admin_emails: Vec::new(),
            max_invoice_total: None,
        }
    }

    fn connected() -> LinkStatus {
        let mut status = LinkStatus::disconnected();
        status.connected = true;
        status
    }

    fn state_with_nif(nif: &str) -> mcf_sfe::reply::DeviceState {
        mcf_sfe::reply::DeviceState {
            mid: "NIM1".into(),
            nif: nif.into(),
            clock: None,
            tc: 0,
            fvc: 0,
            frc: 0,
            last: mcf_sfe::reply::Last::Nothing,
            rates: None,
            currency: None,
        }
    }

    #[test]
    fn each_cause_is_named_and_a_nif_mismatch_names_the_organization() {
        let mut status = connected();
        assert_eq!(problem("shop", &status, &[org("acme", "A1")], false), None);
        status.blocked = Some(crate::msg!("device-blocked-memory-full"));
        let blocked = problem("shop", &status, &[], false).expect("blocked");
        assert_eq!(blocked.code, "box_blocked");
        assert!(blocked.text.to_string().contains("full"));
        status.blocked = None;
        status.state = Some(state_with_nif("B2"));
        let reason = problem("shop", &status, &[org("acme", "A1")], false).expect("nif");
        assert_eq!(reason.code, "nif_mismatch");
        assert!(
            reason.text.to_string().contains("B2") && reason.text.to_string().contains("acme (A1)"),
            "{reason:?}"
        );
        // An organization bound to another device does not count.
        let mut elsewhere = org("other", "A1");
        elsewhere.device = "back".into();
        assert_eq!(problem("shop", &status, &[elsewhere], false), None);
        assert!(problem("shop", &status, &[], true).is_some());
        status.connected = false;
        assert!(problem("shop", &status, &[], false).is_some_and(|r| r.code == "link_down"));
    }
}
