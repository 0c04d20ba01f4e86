//! Injected faults: what a real DGI server and the network in between do to a client (slow
//! answers, 5xx, resets, lost answers, early expiry, expired token, odd JSON). Set at start
//! ([`super::EdefOptions::faults`]), at run time through a [`FaultHandle`], or through the
//! control endpoint `POST /_sim/faults`. The counters (`..._next...`) count down as they act.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::state::{lock, EmcfState};

/// Longest latency the simulator applies, whatever is asked.
pub const MAX_LATENCY: Duration = Duration::from_secs(600);

/// The faults of an e-DEF simulator. All off by default. Its JSON form (control endpoint)
/// uses these field names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EdefFaults {
    /// Every answer (API calls, not the control endpoint) is written this many milliseconds
    /// after the work is done (at most [`MAX_LATENCY`]).
    pub latency_ms: u64,
    /// The next N API calls answer HTTP 503 with an HTML page, doing nothing.
    pub fail_next_5xx: u32,
    /// The next N API calls get their connection closed without any answer, doing nothing.
    pub reset_next: u32,
    /// The next N confirm calls answer HTTP 503, doing nothing (the request stays pending):
    /// a 5xx after the confirm was sent.
    pub fail_next_confirm_5xx: u32,
    /// The next N successful confirms finalize the invoice, then close the connection
    /// without an answer (the lost-answer case).
    pub drop_next_confirm_answer: u32,
    /// The next N successful invoice requests become pending, then the connection is
    /// closed without an answer.
    pub drop_next_request_answer: u32,
    /// The next N successful invoice requests are answered normally (with their uid), then
    /// forgotten at once as if they had expired: a confirm or cancel of that uid is refused
    /// with error 20 (early expiry between the request and its confirm, deterministically).
    pub expire_next_request: u32,
    /// One-shot: forget every pending request now (early expiry). Always reads `false`
    /// afterwards.
    pub expire_all_pending: bool,
    /// Every API call answers 401 (expired token).
    pub token_expired: bool,
    /// DGI refusals (`errorCode`) come on HTTP 200 instead of 400.
    pub errors_on_200: bool,
    /// Amounts and rates in the answers are JSON strings (`"12.50"`).
    pub numbers_as_strings: bool,
    /// `taxGroups` answers uppercase keys (`{"A": 0, "B": 16, ...}`).
    pub upper_case_keys: bool,
}

impl EdefFaults {
    /// How long every answer waits.
    pub fn latency(&self) -> Duration {
        Duration::from_millis(self.latency_ms).min(MAX_LATENCY)
    }
}

/// A change to some faults: the members present replace the current values, the others
/// stay (the body of `POST /_sim/faults`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultPatch {
    /// See [`EdefFaults::latency_ms`].
    pub latency_ms: Option<u64>,
    /// See [`EdefFaults::fail_next_5xx`].
    pub fail_next_5xx: Option<u32>,
    /// See [`EdefFaults::reset_next`].
    pub reset_next: Option<u32>,
    /// See [`EdefFaults::fail_next_confirm_5xx`].
    pub fail_next_confirm_5xx: Option<u32>,
    /// See [`EdefFaults::drop_next_confirm_answer`].
    pub drop_next_confirm_answer: Option<u32>,
    /// See [`EdefFaults::drop_next_request_answer`].
    pub drop_next_request_answer: Option<u32>,
    /// See [`EdefFaults::expire_next_request`].
    pub expire_next_request: Option<u32>,
    /// See [`EdefFaults::expire_all_pending`].
    pub expire_all_pending: Option<bool>,
    /// See [`EdefFaults::token_expired`].
    pub token_expired: Option<bool>,
    /// See [`EdefFaults::errors_on_200`].
    pub errors_on_200: Option<bool>,
    /// See [`EdefFaults::numbers_as_strings`].
    pub numbers_as_strings: Option<bool>,
    /// See [`EdefFaults::upper_case_keys`].
    pub upper_case_keys: Option<bool>,
}

impl FaultPatch {
    /// Applies the members present to `faults`.
    pub fn apply(&self, faults: &mut EdefFaults) {
        fn set<T: Copy>(target: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *target = value;
            }
        }
        set(&mut faults.latency_ms, self.latency_ms);
        set(&mut faults.fail_next_5xx, self.fail_next_5xx);
        set(&mut faults.reset_next, self.reset_next);
        set(
            &mut faults.fail_next_confirm_5xx,
            self.fail_next_confirm_5xx,
        );
        set(
            &mut faults.drop_next_confirm_answer,
            self.drop_next_confirm_answer,
        );
        set(
            &mut faults.drop_next_request_answer,
            self.drop_next_request_answer,
        );
        set(&mut faults.expire_next_request, self.expire_next_request);
        set(&mut faults.expire_all_pending, self.expire_all_pending);
        set(&mut faults.token_expired, self.token_expired);
        set(&mut faults.errors_on_200, self.errors_on_200);
        set(&mut faults.numbers_as_strings, self.numbers_as_strings);
        set(&mut faults.upper_case_keys, self.upper_case_keys);
    }
}

/// Changes the faults of a running simulator. Cheap to clone.
#[derive(Debug, Clone)]
pub struct FaultHandle {
    faults: Arc<Mutex<EdefFaults>>,
    state: Arc<Mutex<EmcfState>>,
}

impl FaultHandle {
    /// A handle on `faults` of the e-MCF `state`; `expire_all_pending` acts at once.
    pub(crate) fn new(faults: EdefFaults, state: Arc<Mutex<EmcfState>>) -> FaultHandle {
        let handle = FaultHandle {
            faults: Arc::new(Mutex::new(EdefFaults::default())),
            state,
        };
        handle.set(faults);
        handle
    }

    /// The current faults.
    pub fn get(&self) -> EdefFaults {
        lock(&self.faults).clone()
    }

    /// Replaces every fault.
    pub fn set(&self, faults: EdefFaults) {
        self.update(|current| *current = faults);
    }

    /// Changes some faults; returns them as they are afterwards. With
    /// `expire_all_pending`, every pending request is forgotten before this returns.
    pub fn update(&self, change: impl FnOnce(&mut EdefFaults)) -> EdefFaults {
        let (expire, after) = {
            let mut faults = lock(&self.faults);
            change(&mut faults);
            let expire = std::mem::take(&mut faults.expire_all_pending);
            (expire, faults.clone())
        };
        // Never both locks at once: the API locks the state, then the faults.
        if expire {
            lock(&self.state).expire_all();
        }
        after
    }

    /// Applies a control-endpoint patch; returns the faults afterwards.
    pub fn apply(&self, patch: &FaultPatch) -> EdefFaults {
        self.update(|faults| patch.apply(faults))
    }

    /// Counts down `reset_next`; whether this call is to be reset.
    pub(crate) fn take_reset(&self) -> bool {
        take(&mut lock(&self.faults).reset_next)
    }

    /// Counts down `fail_next_5xx`; whether this call answers 503.
    pub(crate) fn take_5xx(&self) -> bool {
        take(&mut lock(&self.faults).fail_next_5xx)
    }

    /// Counts down `fail_next_confirm_5xx`; whether this confirm answers 503.
    pub(crate) fn take_confirm_5xx(&self) -> bool {
        take(&mut lock(&self.faults).fail_next_confirm_5xx)
    }

    /// Counts down `drop_next_confirm_answer`; whether this confirm's answer is dropped.
    pub(crate) fn take_drop_confirm(&self) -> bool {
        take(&mut lock(&self.faults).drop_next_confirm_answer)
    }

    /// Counts down `drop_next_request_answer`; whether this request's answer is dropped.
    pub(crate) fn take_drop_request(&self) -> bool {
        take(&mut lock(&self.faults).drop_next_request_answer)
    }

    /// Counts down `expire_next_request`; whether this request is forgotten once answered.
    pub(crate) fn take_expire_request(&self) -> bool {
        take(&mut lock(&self.faults).expire_next_request)
    }
}

/// Counts `counter` down; whether it was above 0.
fn take(counter: &mut u32) -> bool {
    if *counter == 0 {
        return false;
    }
    *counter -= 1;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_changes_only_what_it_names() {
        let mut faults = EdefFaults {
            latency_ms: 5,
            reset_next: 2,
            ..EdefFaults::default()
        };
        let patch: FaultPatch =
            serde_json::from_str(r#"{"fail_next_5xx": 3, "token_expired": true}"#).unwrap();
        patch.apply(&mut faults);
        assert_eq!(faults.latency_ms, 5);
        assert_eq!(faults.reset_next, 2);
        assert_eq!(faults.fail_next_5xx, 3);
        assert!(faults.token_expired);
        assert!(serde_json::from_str::<FaultPatch>(r#"{"reset": 1}"#).is_err());
    }

    #[test]
    fn counters_count_down_and_expiry_is_one_shot() {
        let state = Arc::new(Mutex::new(EmcfState::default()));
        let handle = FaultHandle::new(
            EdefFaults {
                reset_next: 1,
                expire_all_pending: true,
                ..EdefFaults::default()
            },
            state,
        );
        assert!(!handle.get().expire_all_pending);
        assert!(handle.take_reset());
        assert!(!handle.take_reset());
        assert!(!handle.take_5xx());
        let after = handle.update(|f| f.drop_next_confirm_answer = 1);
        assert_eq!(after.drop_next_confirm_answer, 1);
        assert!(handle.take_drop_confirm());
        assert!(!handle.take_drop_confirm());
        let patch: FaultPatch = serde_json::from_str(r#"{"expire_next_request": 2}"#).unwrap();
        assert_eq!(handle.apply(&patch).expire_next_request, 2);
        assert!(handle.take_expire_request());
        assert!(handle.take_expire_request());
        assert!(!handle.take_expire_request());
        assert_eq!(
            EdefFaults {
                latency_ms: u64::MAX,
                ..EdefFaults::default()
            }
            .latency(),
            MAX_LATENCY
        );
    }
}
