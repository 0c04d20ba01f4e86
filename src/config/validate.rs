//! `Config::validate`: every rule a configuration must satisfy, with messages that name the
//! file and the key.

use super::*;

impl Config {
    /// Checks ranges and consistency; the first problem found is returned, naming its key.
    ///
    /// Rules: `max_connections` 1..=65536; `request_timeout_secs` and `header_read_timeout_secs`
    /// 1..=3600; `body_limit_bytes` 1 KiB..=64 MiB; `index_cache_mib` 1..=4096; plan quotas >= 1; device names non-empty,
    /// at most 32 ASCII letters, digits, `-` or `_`, unique ignoring case; device path not empty;
    /// baud > 0; `queue_capacity` 1..=10000; `tries` 1..=10; every ms value 1..=3600000;
    /// `seq_range` hex `first-last` from 20; `rates` letters A..P with percentages in
    /// [0, 100) of at most 2 decimals; `health_interval_secs` at most 86400;
    /// `window_ms` <= `command_budget_ms`; `poll_interval_ms` <= `finalize_budget_ms`; and
    /// `request_timeout_secs` greater than every device's longest budget (with no device: the
    /// default timing, 90 s); `[store]`: a URL without password, TLS keys that agree with it
    /// and each other, `pool_size` 1..=100.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_service()?;
        self.validate_http()?;
        self.validate_alerts()?;
        self.validate_backup()?;
        self.validate_store()?;
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (index, device) in self.devices.iter().enumerate() {
            self.validate_device(index, device, &mut seen)?;
        }
        self.validate_request_timeout()
    }

    /// A refusal of `key` (what is wrong is said after the key: "is 0: ..."), naming this
    /// configuration's file.
    pub(super) fn invalid(&self, key: impl Into<ConfigKey>, message: Message) -> ConfigError {
        ConfigError::Invalid {
            key: key.into(),
            message,
            file: self.source.clone(),
        }
    }

    /// The service's own keys: state directory, connection and HTTP limits, plan quotas.
    fn validate_service(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: Message| self.invalid(key, message);
        if let Some(state_dir) = &self.state_dir {
            if state_dir.as_os_str().is_empty() {
                return Err(invalid("state_dir", msg!("config-state-dir-empty")));
            }
        }
        in_range(self.max_connections, 1, MAX_CONNECTIONS, Unit::None)
            .map_err(|m| invalid("max_connections", m))?;
        in_range(
            self.request_timeout_secs,
            1,
            MAX_TIMEOUT_SECS,
            Unit::Seconds,
        )
        .map_err(|m| invalid("request_timeout_secs", m))?;
        in_range(
            self.header_read_timeout_secs,
            1,
            MAX_TIMEOUT_SECS,
            Unit::Seconds,
        )
        .map_err(|m| invalid("header_read_timeout_secs", m))?;
        in_range(
            self.body_limit_bytes,
            MIN_BODY_LIMIT,
            MAX_BODY_LIMIT,
            Unit::Bytes,
        )
        .map_err(|m| invalid("body_limit_bytes", m))?;
        in_range(self.index_cache_mib, 1, MAX_INDEX_CACHE_MIB, Unit::Mib)
            .map_err(|m| invalid("index_cache_mib", m))?;
        for (key, value) in [
            ("plans.start", self.plans.start),
            ("plans.grow", self.plans.grow),
        ] {
            if value == 0 {
                return Err(invalid(key, msg!("config-plan-zero")));
            }
        }
        Ok(())
    }

    /// One `[[devices]]` entry (the `index`th): name (unique: `seen` holds the names before
    /// it), port, queue, timing, wire settings.
    fn validate_device(
        &self,
        index: usize,
        device: &DeviceEntry,
        seen: &mut HashMap<String, usize>,
    ) -> Result<(), ConfigError> {
        let invalid = |key: ConfigKey, message: Message| self.invalid(key, message);
        let key = |field: &str| ConfigKey::in_device(field, index, &device.name);
        check_device_name(&device.name).map_err(|m| invalid(key("name"), m))?;
        if let Some(first) = seen.insert(device.name.to_ascii_lowercase(), index) {
            return Err(invalid(
                key("name"),
                msg!("config-device-name-repeated", first = first + 1),
            ));
        }
        if device.kind == DeviceKind::WebApi {
            return self.validate_web_api(device, &key);
        }
        if device.has_web_api_keys() {
            return Err(invalid(key("url"), msg!("config-web-api-keys-on-box")));
        }
        if device.path.as_os_str().is_empty() {
            return Err(invalid(key("path"), msg!("config-path-empty")));
        }
        if device.baud == 0 {
            return Err(invalid(key("baud"), msg!("config-baud-zero")));
        }
        in_range(device.queue_capacity, 1, MAX_QUEUE_CAPACITY, Unit::None)
            .map_err(|m| invalid(key("queue_capacity"), m))?;
        if let Some(tries) = device.tries {
            in_range(tries, 1, MAX_TRIES, Unit::None).map_err(|m| invalid(key("tries"), m))?;
        }
        for (field, value) in [
            ("window_ms", device.window_ms),
            ("command_budget_ms", device.command_budget_ms),
            ("finalize_budget_ms", device.finalize_budget_ms),
            ("credit_note_budget_ms", device.credit_note_budget_ms),
            ("poll_interval_ms", device.poll_interval_ms),
        ] {
            if let Some(value) = value {
                in_range(value, 1, MAX_BUDGET_MS, Unit::Ms).map_err(|m| invalid(key(field), m))?;
            }
        }
        self.validate_wire_and_timing(device, &key)
    }

    /// A `web_api` entry: its web API keys; no serial port.
    fn validate_web_api(
        &self,
        device: &DeviceEntry,
        key: &dyn Fn(&str) -> ConfigKey,
    ) -> Result<(), ConfigError> {
        if !device.path.as_os_str().is_empty() {
            return Err(self.invalid(key("path"), msg!("config-path-on-web-api")));
        }
        in_range(device.queue_capacity, 1, MAX_QUEUE_CAPACITY, Unit::None)
            .map_err(|m| self.invalid(key("queue_capacity"), m))?;
        device
            .validate_web_api_keys()
            .map_err(|(field, m)| self.invalid(key(field), m))
    }

    /// A device's wire settings, fallback rates, health interval and timing coherence.
    fn validate_wire_and_timing(
        &self,
        device: &DeviceEntry,
        key: &dyn Fn(&str) -> ConfigKey,
    ) -> Result<(), ConfigError> {
        let invalid = |key: ConfigKey, message: Message| self.invalid(key, message);
        let wire = device.wire().map_err(|(field, m)| invalid(key(field), m))?;
        if wire.seq.first() == wire.seq.last() && wire.seq_replay {
            return Err(invalid(key("seq_range"), msg!("config-seq-single")));
        }
        device
            .fallback_rates()
            .map_err(|(field, m)| invalid(key(field), m))?;
        if let Some(secs) = device.health_interval_secs {
            in_range(secs, 0, MAX_TIMEOUT_SECS * 24, Unit::Seconds)
                .map_err(|m| invalid(key("health_interval_secs"), m))?;
        }
        let timing = device.timing();
        if timing.window > timing.command_budget {
            return Err(invalid(
                key("window_ms"),
                msg!(
                    "config-window-over-budget",
                    window = timing.window.as_millis().to_string(),
                    budget = timing.command_budget.as_millis().to_string()
                ),
            ));
        }
        if timing.poll_interval > timing.finalize_budget {
            return Err(invalid(
                key("poll_interval_ms"),
                msg!(
                    "config-poll-over-budget",
                    poll = timing.poll_interval.as_millis().to_string(),
                    budget = timing.finalize_budget.as_millis().to_string()
                ),
            ));
        }
        Ok(())
    }

    /// `request_timeout_secs` above every device's longest budget (a slow certification must
    /// not be cut off mid-way).
    fn validate_request_timeout(&self) -> Result<(), ConfigError> {
        let request_timeout = self.request_timeout();
        let longest = if self.devices.is_empty() {
            vec![(msg!("config-the-simulator"), LinkTiming::default())]
        } else {
            self.devices
                .iter()
                .filter(|d| d.kind == DeviceKind::Box)
                .map(|d| {
                    (
                        msg!("config-the-device", name = d.name.as_str()),
                        d.timing(),
                    )
                })
                .collect()
        };
        for (what, timing) in longest {
            let budget = timing.longest_budget();
            if request_timeout <= budget {
                return Err(self.invalid(
                    "request_timeout_secs",
                    msg!(
                        "config-timeout-below-budget",
                        timeout = request_timeout.as_secs(),
                        what = what,
                        budget = budget.as_millis().to_string()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The unit of a number in a range's refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    /// A count.
    None,
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Ms,
    /// Minutes.
    Minutes,
    /// Days.
    Days,
    /// Bytes.
    Bytes,
    /// Mebibytes.
    Mib,
    /// Bytes per second.
    BytesPerSecond,
}

impl Unit {
    /// Its word in a message (`none` for a count).
    fn code(self) -> &'static str {
        match self {
            Unit::None => "none",
            Unit::Seconds => "seconds",
            Unit::Ms => "ms",
            Unit::Minutes => "minutes",
            Unit::Days => "days",
            Unit::Bytes => "bytes",
            Unit::Mib => "mib",
            Unit::BytesPerSecond => "bytes-per-second",
        }
    }
}

/// `Err` saying "is {value}: it must be between {min} and {max}" in `unit`.
pub(super) fn in_range<T: PartialOrd + fmt::Display>(
    value: T,
    min: T,
    max: T,
    unit: Unit,
) -> Result<(), Message> {
    if value < min || value > max {
        Err(msg!(
            "config-out-of-range",
            value = value.to_string(),
            min = min.to_string(),
            max = max.to_string(),
            unit = msg!("config-unit", unit = unit.code())
        ))
    } else {
        Ok(())
    }
}

fn check_device_name(name: &str) -> Result<(), Message> {
    if name.is_empty() {
        return Err(msg!("config-device-name-empty"));
    }
    if name.len() > MAX_DEVICE_NAME {
        return Err(msg!("config-device-name-long", max = MAX_DEVICE_NAME));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(msg!("config-device-name-chars"));
    }
    Ok(())
}
