//! The MCF-SFE wire protocol of the DRC e-MCF fiscal device, as this project implements it
//! (see `PROTOCOL.md` beside this crate): frames and their block check ([`frame`], [`wire`]),
//! `tokio_util` codecs for both ends of the link ([`codec`]), and typed commands and replies
//! with their DATA fields ([`command`], [`reply`], [`fields`], [`types`]).
//!
//! No runtime and no I/O: the gateway's device link and the simulator own the port.
#![deny(missing_docs)]

pub mod capture;
pub mod codec;
pub mod command;
pub mod dialect;
pub mod fields;
pub mod frame;
pub mod reply;
pub mod types;
pub mod wire;

pub use codec::{drop_stalled, DeviceCodec, FrameError, FromDevice, FromHost, HostCodec, ToHost};
pub use command::Command;
pub use dialect::{Dialect, LineBreaks};
pub use fields::{DataError, FieldError};
pub use frame::{ReplyFrame, RequestFrame};
pub use reply::Reply;
pub use wire::{Seq, SeqRange, Status, StatusFlag};
