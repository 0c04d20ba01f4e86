//! The fault relay over real pseudo-terminals: a fake device (a pty whose master the test
//! drives) or the simulator on one side, a host opening the relay's symlink on the other.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{fast_options, fv_invoice, Host};
use emcf_sim::port::Pty;
use emcf_sim::relay::{
    Direction, DirectionFaults, Relay, RelayConfig, RelayFaults, RelayHandle, Rule, RuleAction,
};
use emcf_sim::start_on_pty;
use mcf_sfe::{Command, ReplyFrame, Seq, Status};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::timeout;
use tokio_serial::{SerialPortBuilderExt, SerialStream};

/// A device end the test drives byte by byte: the master of a pty at `dir/device`.
struct FakeDevice {
    master: SerialStream,
    _pty: Pty,
}

impl FakeDevice {
    fn open(link: &Path) -> FakeDevice {
        let mut pty = Pty::open(Some(link)).expect("device pty");
        let master = pty.take_master().expect("master");
        FakeDevice { master, _pty: pty }
    }
}

struct Bench {
    dir: tempfile::TempDir,
    device: FakeDevice,
    relay: RelayHandle,
    host: SerialStream,
}

fn host_link(dir: &Path) -> PathBuf {
    dir.join("relay0")
}

fn open_host(link: &Path) -> SerialStream {
    tokio_serial::new(link.to_string_lossy(), 115_200)
        .open_native_async()
        .expect("open the relay's pty like a host")
}

/// A fake device, a relay with `faults` and `seed` in front of it, a host on the relay.
async fn bench(to_device: DirectionFaults, to_host: DirectionFaults, seed: u64) -> Bench {
    let dir = tempfile::tempdir().expect("tempdir");
    let device = FakeDevice::open(&dir.path().join("device"));
    let mut config = RelayConfig::new(host_link(dir.path()), dir.path().join("device"));
    config.faults = RelayFaults { to_device, to_host };
    config.seed = seed;
    let relay = Relay::start(config).expect("relay starts");
    wait_until(Duration::from_secs(3), || relay.stats().device_connected).await;
    let host = open_host(&host_link(dir.path()));
    Bench {
        dir,
        device,
        relay,
        host,
    }
}

async fn wait_until(within: Duration, mut ok: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ok() {
        assert!(
            started.elapsed() < within,
            "condition not met in {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn send(io: &mut SerialStream, bytes: &[u8]) {
    io.write_all(bytes).await.expect("write");
    io.flush().await.expect("flush");
}

/// Everything that arrives until the line has been quiet for `quiet`.
async fn read_until_quiet(io: &mut SerialStream, quiet: Duration) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match timeout(quiet, io.read(&mut buf)).await {
            Ok(Ok(0)) | Err(_) => return got,
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Ok(Err(e)) => panic!("read failed: {e}"),
        }
    }
}

/// Reads exactly `n` bytes within `within`.
async fn read_n(io: &mut SerialStream, n: usize, within: Duration) -> Vec<u8> {
    let mut got = vec![0u8; n];
    timeout(within, io.read_exact(&mut got))
        .await
        .unwrap_or_else(|_| panic!("{n} bytes did not come within {within:?}"))
        .expect("read");
    got
}

fn reply(seq: u8, cmd: u8, data: &str) -> Vec<u8> {
    ReplyFrame::new(
        Seq::new(seq).unwrap(),
        cmd,
        data.as_bytes().to_vec(),
        Status::default(),
    )
    .unwrap()
    .to_bytes()
}

fn request(seq: u8, command: &Command) -> Vec<u8> {
    command.to_frame(Seq::new(seq).unwrap()).unwrap().to_bytes()
}

/// A device -> host stream: replies with SYN and NAK between them and some line noise.
fn reply_stream(frames: usize) -> Vec<Vec<u8>> {
    (0..frames)
        .map(|i| {
            let mut chunk = Vec::new();
            if i % 3 == 0 {
                chunk.extend([0x16, 0x16]);
            }
            if i % 5 == 0 {
                chunk.push(0x15);
            }
            chunk.extend(reply(
                0x20 + (i % 200) as u8,
                [0xC1, 0x31, 0x33, 0x38][i % 4],
                &format!("R:{i},1,FV,20261121143005,SIM0000001,A1234567B,F-{i},SIG{i:021}"),
            ));
            chunk
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_faults_bytes_in_equal_bytes_out_both_ways() {
    let mut b = bench(DirectionFaults::default(), DirectionFaults::default(), 1).await;
    let replies = reply_stream(40);
    let mut expected_at_host: Vec<u8> = Vec::new();
    for chunk in &replies {
        // Split every chunk in two writes: frames straddle reads.
        let (a, c) = chunk.split_at(chunk.len() / 2);
        send(&mut b.device.master, a).await;
        send(&mut b.device.master, c).await;
        expected_at_host.extend(chunk);
    }
    let got = read_n(&mut b.host, expected_at_host.len(), Duration::from_secs(5)).await;
    assert_eq!(got, expected_at_host);

    let mut expected_at_device: Vec<u8> = Vec::new();
    for i in 0..40u8 {
        let frame = request(0x20 + i, &Command::DeviceState);
        send(&mut b.host, &frame).await;
        expected_at_device.extend(&frame);
        // Noise from the host side passes too.
        send(&mut b.host, &[0x00, 0x7F]).await;
        expected_at_device.extend([0x00, 0x7F]);
    }
    let got = read_n(
        &mut b.device.master,
        expected_at_device.len(),
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(got, expected_at_device);
    // A partial frame is passed on after a quiet time, not held forever.
    let half = &request(0x30, &Command::Subtotal)[..5];
    send(&mut b.host, half).await;
    assert_eq!(
        read_n(&mut b.device.master, 5, Duration::from_secs(1)).await,
        half
    );

    let stats = b.relay.stats();
    assert_eq!(stats.to_host.frames, 40);
    assert_eq!(stats.to_host.frames_forwarded, 40);
    assert_eq!(stats.to_host.bytes_in, expected_at_host.len() as u64);
    assert_eq!(stats.to_host.bytes_out, expected_at_host.len() as u64);
    assert_eq!(stats.to_device.frames, 40);
    assert_eq!(stats.to_device.by_cmd.get(&0xC1), Some(&40));
    assert_eq!(stats.to_device.partial_flushes, 1);
    assert_eq!(
        stats.to_host.faults.total() + stats.to_device.faults.total(),
        0
    );
    drop(b.dir);
}

/// Sends `chunks` from the fake device and returns what the host got.
async fn through_to_host(faults: DirectionFaults, chunks: &[Vec<u8>]) -> (Vec<u8>, RelayHandle) {
    through_to_host_seeded(faults, chunks, 7).await
}

async fn through_to_host_seeded(
    faults: DirectionFaults,
    chunks: &[Vec<u8>],
    seed: u64,
) -> (Vec<u8>, RelayHandle) {
    let mut b = bench(DirectionFaults::default(), faults, seed).await;
    for chunk in chunks {
        send(&mut b.device.master, chunk).await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let got = read_until_quiet(&mut b.host, Duration::from_millis(400)).await;
    (got, b.relay)
}

fn flips(p: f64) -> DirectionFaults {
    DirectionFaults {
        flip_bit: p,
        ..DirectionFaults::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flip_changes_exactly_one_bit_of_every_byte() {
    let chunks = reply_stream(6);
    let sent: Vec<u8> = chunks.concat();
    let (got, relay) = through_to_host(flips(1.0), &chunks).await;
    assert_eq!(got.len(), sent.len());
    for (a, b) in sent.iter().zip(&got) {
        assert_eq!((a ^ b).count_ones(), 1, "{a:#04x} -> {b:#04x}");
    }
    assert_eq!(relay.stats().to_host.faults.flipped_bits, sent.len() as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_bytes_and_dropped_frames_never_arrive() {
    let chunks = reply_stream(6);
    let sent: Vec<u8> = chunks.concat();
    let faults = DirectionFaults {
        drop_byte: 1.0,
        ..DirectionFaults::default()
    };
    let (got, relay) = through_to_host(faults, &chunks).await;
    assert!(got.is_empty(), "{got:02x?}");
    assert_eq!(
        relay.stats().to_host.faults.dropped_bytes,
        sent.len() as u64
    );

    // Whole frames go; SYN and NAK outside frames still pass.
    let faults = DirectionFaults {
        drop_frame: 1.0,
        ..DirectionFaults::default()
    };
    let (got, relay) = through_to_host(faults, &chunks).await;
    let loose: Vec<u8> = sent
        .iter()
        .copied()
        .filter(|b| *b == 0x15 || *b == 0x16)
        .collect();
    assert_eq!(got, loose);
    assert_eq!(relay.stats().to_host.faults.dropped_frames, 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicated_frames_arrive_twice_and_stale_frames_are_earlier_ones() {
    let a = reply(0x21, 0x31, "");
    let c = reply(
        0x22,
        0x38,
        "R:1,1,FV,20261121143005,SIM0000001,A1234567B,F-1,X",
    );
    let faults = DirectionFaults {
        duplicate_frame: 1.0,
        ..DirectionFaults::default()
    };
    let (got, relay) = through_to_host(faults, &[a.clone(), c.clone()]).await;
    assert_eq!(got, [a.clone(), a.clone(), c.clone(), c.clone()].concat());
    assert_eq!(relay.stats().to_host.faults.duplicated_frames, 2);

    let faults = DirectionFaults {
        stale_frame: 1.0,
        ..DirectionFaults::default()
    };
    let (got, relay) = through_to_host(faults, &[a.clone(), c.clone()]).await;
    // Nothing before the first frame (no history yet); a copy of it before the second.
    assert_eq!(got, [a.clone(), a.clone(), c.clone()].concat());
    assert_eq!(relay.stats().to_host.faults.stale_frames, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_bursts_come_before_frames_and_hold_no_soh() {
    let chunks = vec![reply(0x21, 0x31, ""), reply(0x22, 0x33, "1392.00")];
    let faults = DirectionFaults {
        garbage: 1.0,
        ..DirectionFaults::default()
    };
    let (got, relay) = through_to_host(faults, &chunks).await;
    let first = got
        .iter()
        .position(|b| *b == 0x01)
        .expect("a frame arrives");
    assert!((1..=24).contains(&first), "burst of {first} bytes");
    let rest = &got[first..];
    let second = rest[1..]
        .iter()
        .position(|b| *b == 0x01)
        .map(|p| p + 1)
        .expect("second frame");
    assert_eq!(&rest[..chunks[0].len()], &chunks[0][..]);
    let burst = &rest[chunks[0].len()..second];
    assert!((1..=24).contains(&burst.len()), "{burst:02x?}");
    assert_eq!(&rest[second..], &chunks[1][..]);
    assert_eq!(relay.stats().to_host.faults.garbage_bursts, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delayed_frame_holds_back_what_follows_it() {
    let faults = DirectionFaults {
        delay_frame: 1.0,
        delay_for: Duration::from_millis(400),
        ..DirectionFaults::default()
    };
    let mut b = bench(DirectionFaults::default(), faults, 3).await;
    let frame = reply(0x21, 0x38, "R:1");
    let started = Instant::now();
    send(&mut b.device.master, &frame).await;
    send(&mut b.device.master, &[0x16]).await;
    let got = read_n(&mut b.host, frame.len() + 1, Duration::from_secs(2)).await;
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(380), "arrived after {took:?}");
    assert_eq!(got, [frame, vec![0x16]].concat(), "order kept");
    assert_eq!(b.relay.stats().to_host.faults.delayed_frames, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_towards_the_device_hit_requests() {
    let faults = DirectionFaults {
        drop_frame: 1.0,
        ..DirectionFaults::default()
    };
    let mut b = bench(faults, DirectionFaults::default(), 5).await;
    send(&mut b.host, &request(0x20, &Command::DeviceState)).await;
    send(&mut b.host, &[0x42]).await;
    let got = read_until_quiet(&mut b.device.master, Duration::from_millis(300)).await;
    assert_eq!(got, [0x42]);
    let stats = b.relay.stats();
    assert_eq!(stats.to_device.faults.dropped_frames, 1);
    assert_eq!(stats.to_host.faults.total(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_drops_only_the_next_replies_to_its_command() {
    let mut b = bench(DirectionFaults::default(), DirectionFaults::default(), 9).await;
    b.relay.drop_next_replies(0x38, 2).await.unwrap();
    b.relay
        .arm(Rule {
            direction: Direction::ToHost,
            cmd: Some(0x33),
            action: RuleAction::Duplicate,
            times: 1,
        })
        .await
        .unwrap();
    assert_eq!(b.relay.armed().await.unwrap(), 2);
    let c1 = reply(0x20, 0xC1, "x");
    let sub = reply(0x21, 0x33, "1.00");
    let f1 = reply(0x22, 0x38, "R:a");
    let f2 = reply(0x22, 0x38, "R:a");
    let f3 = reply(0x23, 0x38, "R:b");
    for frame in [&c1, &sub, &f1, &f2, &f3] {
        send(&mut b.device.master, frame).await;
    }
    let got = read_until_quiet(&mut b.host, Duration::from_millis(300)).await;
    assert_eq!(got, [c1, sub.clone(), sub, f3].concat());
    assert_eq!(b.relay.armed().await.unwrap(), 0);
    assert_eq!(b.relay.stats().to_host.faults.rules_fired, 3);
}

/// Runs a fixed byte stream through a relay with `seed` and returns what the host got.
async fn noisy_run(seed: u64) -> (Vec<u8>, u64) {
    let faults = DirectionFaults {
        flip_bit: 0.01,
        drop_byte: 0.01,
        drop_frame: 0.1,
        duplicate_frame: 0.1,
        garbage: 0.1,
        stale_frame: 0.1,
        ..DirectionFaults::default()
    };
    let chunks = reply_stream(60);
    let (got, relay) = through_to_host_seeded(faults, &chunks, seed).await;
    (got, relay.stats().to_host.faults.total())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_gives_the_same_faults_and_another_seed_others() {
    let (first, faults) = noisy_run(7).await;
    let (again, _) = noisy_run(7).await;
    assert!(faults > 10, "only {faults} faults");
    assert_eq!(first, again);
    assert_ne!(first, reply_stream(60).concat());
    let (other, _) = noisy_run(8).await;
    assert_ne!(first, other);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_unplugs_the_host_side_and_restore_plugs_a_new_one_in() {
    let mut b = bench(DirectionFaults::default(), DirectionFaults::default(), 1).await;
    let link = host_link(b.dir.path());
    assert!(std::fs::read_link(&link).is_ok(), "the host link exists");
    send(&mut b.device.master, &[0x16]).await;
    assert_eq!(read_n(&mut b.host, 1, Duration::from_secs(1)).await, [0x16]);

    b.relay.cut().await.unwrap();
    assert!(!link.exists() && std::fs::symlink_metadata(&link).is_err());
    // The host holding the port sees it vanish: EIO or end of stream, not silence.
    let mut buf = [0u8; 16];
    let read = timeout(Duration::from_secs(2), b.host.read(&mut buf))
        .await
        .expect("the read ends");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    assert!(tokio_serial::new(link.to_string_lossy(), 115_200)
        .open_native_async()
        .is_err());
    // What the device says meanwhile is lost.
    send(&mut b.device.master, &reply(0x20, 0xC1, "lost")).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    b.relay.cut().await.unwrap();
    let stats = b.relay.stats();
    assert!(!stats.host_connected);
    assert_eq!(stats.cuts, 1);
    assert!(stats.to_host.bytes_discarded > 0);

    b.relay.restore().await.unwrap();
    assert!(std::fs::read_link(&link).is_ok());
    let mut host = open_host(&link);
    let frame = reply(0x21, 0xC1, "back");
    send(&mut b.device.master, &frame).await;
    assert_eq!(
        read_n(&mut host, frame.len(), Duration::from_secs(1)).await,
        frame
    );
    let request = request(0x22, &Command::DeviceState);
    send(&mut host, &request).await;
    assert_eq!(
        read_n(&mut b.device.master, request.len(), Duration::from_secs(1)).await,
        request
    );
    assert!(b.relay.stats().host_connected);
    let stats = b.relay.stop().await;
    assert!(!stats.host_connected);
    assert!(
        std::fs::symlink_metadata(&link).is_err(),
        "stop removes the link"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_side_that_comes_back_at_the_same_path_is_reopened() {
    let mut b = bench(DirectionFaults::default(), DirectionFaults::default(), 1).await;
    let device_link = b.dir.path().join("device");
    drop(b.device);
    wait_until(Duration::from_secs(2), || !b.relay.stats().device_connected).await;
    // Bytes for an absent device are lost, the relay does not stop.
    send(&mut b.host, &request(0x20, &Command::DeviceState)).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    let mut device = FakeDevice::open(&device_link);
    wait_until(Duration::from_secs(2), || b.relay.stats().device_connected).await;
    let frame = request(0x21, &Command::DeviceState);
    send(&mut b.host, &frame).await;
    assert_eq!(
        read_n(&mut device.master, frame.len(), Duration::from_secs(1)).await,
        frame
    );
    let stats = b.relay.stats();
    assert_eq!(stats.device_opens, 2);
    assert!(stats.to_device.bytes_discarded > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_certifies_through_the_relay_despite_duplicates_and_stale_replies() {
    let dir = tempfile::tempdir().unwrap();
    let sim_link = dir.path().join("sim");
    let sim = start_on_pty(fast_options(&dir.path().join("s.json")), Some(&sim_link))
        .await
        .unwrap();
    let mut config = RelayConfig::new(host_link(dir.path()), &sim_link);
    config.faults.to_host = DirectionFaults {
        duplicate_frame: 1.0,
        stale_frame: 1.0,
        ..DirectionFaults::default()
    };
    let relay = Relay::start(config).unwrap();
    wait_until(Duration::from_secs(3), || relay.stats().device_connected).await;
    let mut host = Host::open(&host_link(dir.path()));
    let (_, first) = host.certify(&fv_invoice("F-RELAY-1")).await;
    let (_, second) = host.certify(&fv_invoice("F-RELAY-2")).await;
    assert_eq!((first.tc, second.tc), (1, 2));
    assert_eq!(second.rn.as_deref(), Some("F-RELAY-2"));
    assert!(host.stats.stale > 0, "{:?}", host.stats);
    let stats = relay.stats();
    assert!(stats.to_host.faults.stale_frames > 0);
    assert_eq!(stats.to_host.faults.duplicated_frames, stats.to_host.frames);
    sim.stop().await.unwrap();
}
