//! The channel kinds (`box`, `web_api`, and the older spellings still read) and the keys of a
//! web API entry.

use super::{invalid, parse};
use crate::config::*;

/// The keys of a `kind = "web_api"` entry are checked, and named when wrong.
#[test]
fn web_api_keys_are_validated() {
    // A box without its port: since `kind` (1.2.0) `path` is optional to the parser, and
    // validation names it.
    let config = parse("[[devices]]\nname = \"a\"\n").unwrap();
    let (key, message) = invalid(&config);
    assert!(key.contains("path"), "{key}: {message}");
    let config = parse("[[devices]]\nname = \"a\"\nkind = \"web_api\"\n").unwrap();
    let (key, message) = invalid(&config);
    assert!(key.contains("url"), "{key}: {message}");
    let config =
        parse("[[devices]]\nname = \"a\"\nkind = \"web_api\"\nurl = \"https://edef.dgirdc.cd\"\n")
            .unwrap();
    let (key, message) = invalid(&config);
    assert!(key.contains("token_file"), "{key}: {message}");
    let config =
        parse("[[devices]]\nname = \"a\"\npath = \"/dev/x\"\ntoken_file = \"t\"\n").unwrap();
    let (key, message) = invalid(&config);
    assert!(message.contains("kind = \"web_api\""), "{key}: {message}");

    let web_api = "[[devices]]\nname = \"a\"\nkind = \"web_api\"\nurl = \"https://edef.dgirdc.cd\"\ntoken_file = \"t\"\n";
    let config = parse(&format!(
        "{web_api}sandbox_url = \"https://developper.dgirdc.cd/edef\"\n"
    ))
    .unwrap();
    let (key, message) = invalid(&config);
    assert!(key.contains("sandbox_token_file"), "{key}: {message}");
    let config = parse(&format!("{web_api}sandbox_token_file = \"s\"\n")).unwrap();
    let (key, message) = invalid(&config);
    assert!(
        key.contains("sandbox_token_file") && message.contains("sandbox_url"),
        "{key}: {message}"
    );
    let config = parse(&format!(
        "{web_api}sandbox_url = \"ftp://x\"\nsandbox_token_file = \"s\"\n"
    ))
    .unwrap();
    let (key, message) = invalid(&config);
    assert!(key.contains("sandbox_url"), "{key}: {message}");
    let config = parse(&format!("{web_api}anonymous_client = \"anonyme\"\n")).unwrap();
    let (key, message) = invalid(&config);
    assert!(
        key.contains("anonymous_client") && message.contains("\"pp\""),
        "{key}: {message}"
    );
    let config = parse(&format!("{web_api}anonymous_client = \"pp\"\n")).unwrap();
    assert!(config.devices[0].web_api_settings().anonymous_client);
    let config = parse(&format!(
        "{web_api}sandbox_url = \"https://developper.dgirdc.cd/edef/\"\nsandbox_token_file = \"s\"\n"
    ))
    .unwrap();
    assert!(!config.devices[0].web_api_settings().anonymous_client);
    let sandbox = config.devices[0]
        .sandbox_web_api_settings("sandbox-acme")
        .unwrap();
    assert_eq!(sandbox.url, "https://developper.dgirdc.cd/edef");
    assert_eq!(sandbox.name, "sandbox-acme");
    assert_eq!(sandbox.token_file, std::path::PathBuf::from("s"));
}

/// The channel kinds have one name, `box` and `web_api` (as in monitoring); the spellings of
/// 1.2.0 to 1.7.0 (`serial`, `edef`) still read, and are written the new way.
#[test]
fn channel_kinds_are_box_and_web_api_and_the_old_names_still_read() {
    let web_api = "url = \"https://edef.dgirdc.cd\"\ntoken_file = \"t\"\n";
    for (kind, expected) in [
        ("box", DeviceKind::Box),
        ("serial", DeviceKind::Box),
        ("web_api", DeviceKind::WebApi),
        ("edef", DeviceKind::WebApi),
    ] {
        let keys = match expected {
            DeviceKind::Box => "path = \"/dev/ttyUSB0\"\n",
            DeviceKind::WebApi => web_api,
        };
        let text = format!("[[devices]]\nname = \"a\"\nkind = \"{kind}\"\n{keys}");
        let config = parse(&text).unwrap_or_else(|e| panic!("{kind}: {e}"));
        config.validate().unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(config.devices[0].kind, expected, "{kind}");
        let written = config.to_toml_string().unwrap();
        match expected {
            DeviceKind::Box => assert!(!written.contains("kind"), "{written}"),
            DeviceKind::WebApi => assert!(written.contains("kind = \"web_api\""), "{written}"),
        }
        assert_eq!(parse(&written).unwrap().devices, config.devices);
    }
    assert_eq!(DeviceKind::Box.as_str(), "box");
    assert_eq!(DeviceKind::WebApi.as_str(), "web_api");
    let message = super::parse_error("[[devices]]\nname = \"a\"\nkind = \"usb\"\n");
    assert!(
        message.contains("box") && message.contains("web_api"),
        "{message}"
    );
}

/// The packaged file's commented web API block, uncommented, is a valid `web_api` entry.
#[test]
fn the_packaged_example_writes_the_web_api_kind() {
    let example = include_str!("../../../systemd/config.toml.example");
    let block = "# [[devices]]\n# name = \"dgi\"\n# kind = \"web_api\"\n";
    assert!(
        example.contains(block),
        "the web API block is there, commented"
    );
    let named = example.replace(block, "[[devices]]\nname = \"dgi\"\nkind = \"web_api\"\n");
    let named = named
        .replace("# url = \"https://edef", "url = \"https://edef")
        .replace("# token_file = ", "token_file = ");
    let config = parse(&named).unwrap();
    config.validate().unwrap();
    assert_eq!(config.devices.len(), 1);
    assert_eq!(config.devices[0].kind, DeviceKind::WebApi);
    assert!(!example.contains("\"serial\"") && !example.contains("\"edef\""));
}
