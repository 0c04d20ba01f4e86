//! Devices kept as data (issue 29): web API e-MCFs in PostgreSQL, their tokens sealed by the
//! caller (`store/postgres/devices.rs`). The embedded store's devices are the configuration's
//! `[[devices]]` blocks: it refuses these with [`StoreError::DevicesInFile`].

use super::postgres::{DeviceRefusal, StoredDevice};
use super::sealed::Keyring;
use super::{Store, StoreError};

impl Store {
    /// The devices kept (removed ones left out), by name.
    pub fn stored_devices(&self) -> Result<Vec<StoredDevice>, StoreError> {
        match self {
            Store::Embedded(_) => Err(StoreError::DevicesInFile),
            Store::Postgres(p) => p.run(p.register().devices()),
        }
    }

    /// What moves whenever a kept device is added, changed or removed (one short read, for
    /// the replicas' polling).
    pub fn stored_devices_version(&self) -> Result<i64, StoreError> {
        match self {
            Store::Embedded(_) => Err(StoreError::DevicesInFile),
            Store::Postgres(p) => p.run(p.register().devices_version()),
        }
    }

    /// Keeps a new web API device, its token sealed (`token_sealed`, by key `key_id`).
    pub fn add_stored_device(
        &self,
        name: &str,
        url: &str,
        token_sealed: &str,
        key_id: &str,
    ) -> Result<StoredDevice, StoreError> {
        match self {
            Store::Embedded(_) => Err(StoreError::DevicesInFile),
            Store::Postgres(p) => p
                .run(
                    p.register()
                        .add_device(name, "web_api", url, token_sealed, key_id),
                )?
                .map_err(|r| device_refused(r, name)),
        }
    }

    /// Changes a kept device's URL and/or sealed token (with its key's id).
    pub fn update_stored_device(
        &self,
        name: &str,
        url: Option<&str>,
        sealed: Option<(&str, &str)>,
    ) -> Result<StoredDevice, StoreError> {
        match self {
            Store::Embedded(_) => Err(StoreError::DevicesInFile),
            Store::Postgres(p) => p
                .run(p.register().update_device(name, url, sealed))?
                .map_err(|r| device_refused(r, name)),
        }
    }

    /// Removes a kept device, refused while an organization names it or an intent on it is
    /// open ([`StoreError::DeviceInUse`] says which).
    pub fn remove_stored_device(&self, name: &str) -> Result<(), StoreError> {
        match self {
            Store::Embedded(_) => Err(StoreError::DevicesInFile),
            Store::Postgres(p) => p
                .run(p.register().remove_device(name))?
                .map_err(|r| device_refused(r, name)),
        }
    }

    /// Every kept token sealed again with the first key of `keyring`, in one transaction:
    /// how many changed (nothing changes when one cannot be opened).
    pub fn reseal_stored_devices(&self, keyring: &Keyring) -> Result<usize, StoreError> {
        match self {
            Store::Embedded(_) => Err(StoreError::DevicesInFile),
            Store::Postgres(p) => {
                let key_id = keyring.sealing().id().to_owned();
                let reseal = |name: &str, sealed: &str| {
                    keyring
                        .reseal(name, sealed)
                        .map(|new| new.map(|text| (text, key_id.clone())))
                };
                p.run(p.register().reseal_devices(reseal))?
                    .map_err(|(device, error)| StoreError::Sealed { device, error })
            }
        }
    }
}

/// A device's change the schema refused, as the store says it.
fn device_refused(refusal: DeviceRefusal, name: &str) -> StoreError {
    match refusal {
        DeviceRefusal::Exists => StoreError::DeviceExists(name.to_owned()),
        DeviceRefusal::Unknown => StoreError::UnknownDevice(name.to_owned()),
        DeviceRefusal::InUse {
            organizations,
            open_intents,
        } => StoreError::DeviceInUse {
            device: name.to_owned(),
            organizations,
            open_intents,
        },
        DeviceRefusal::Invalid => StoreError::Invalid(format!("device {name:?}")),
    }
}
