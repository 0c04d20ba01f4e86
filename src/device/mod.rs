//! The device link: one actor task per device owns its port.
