//! The stylesheet served at `/dashboard/style.css`: one file, no build, phone first.
//!
//! - Nothing lays out wider than the screen (checked at 390 px by `tests/browser`): boxes
//!   are `border-box`, form controls at most their container's width, a `fieldset` may
//!   shrink (`min-width: 0`), long values (ids, codes, digests) wrap anywhere outside tables.
//! - Tables (`table.cards`) are rows of cells on a wide screen, inside a box that scrolls on
//!   its own if ever too wide (`.table-wrap`); below 40em each row is a card, each cell a line
//!   led by its column's name (`data-label`). Ids in table cells do not wrap on a wide
//!   screen (a short column, never one character a line) and wrap anywhere in a card.
//! - Definition lists (`dl.grid`) are two columns, one on a phone.
//! - Badges: green (`up`) when a device answers, red (`down`) for something wrong, grey
//!   (`idle`) for a state that is not a fault (a sandbox not used yet).

/// The stylesheet.
pub const STYLE: &str = "\
*,*::before,*::after{box-sizing:border-box}\
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}\
body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9;line-height:1.4}\
header{background:#123;color:#fff;padding:.6em 1em;display:flex;flex-wrap:wrap;gap:.3em 1em;align-items:baseline}\
header .brand{margin-right:auto}\
header .lang a{color:#fff;padding:.2em .3em}\
header .lang a[aria-current]{font-weight:bold;text-decoration:none;border-bottom:2px solid #fff}\
nav{display:flex;gap:.4em 1em;align-items:center;padding:.5em 1em;background:#e4e8ee;flex-wrap:wrap}\
nav a[aria-current]{font-weight:bold;text-decoration:none;color:#000}\
nav .org{font-weight:600;margin-right:auto;min-width:0;overflow-wrap:anywhere}\
main{padding:1em;max-width:75em;overflow-wrap:break-word}\
h1{font-size:1.5em;overflow-wrap:anywhere}h2{font-size:1.2em;overflow-wrap:anywhere}\
.table-wrap{overflow-x:auto;max-width:100%}\
table{border-collapse:collapse;background:#fff;margin:.5em 0}\
th,td{border:1px solid #ccd;padding:.3em .6em;text-align:left;vertical-align:top}\
th{background:#eef1f5}\
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
code,.mono{font-family:ui-monospace,monospace;overflow-wrap:anywhere}\
td code{white-space:nowrap}\
form.inline{display:inline;margin:0}\
fieldset{background:#fff;border:1px solid #ccd;margin:1em 0;min-width:0}\
label{display:inline-block;margin:0 1em .4em 0;max-width:100%}\
input,select,button{font:inherit;max-width:100%}\
input:not([type=radio]):not([type=hidden]),select{padding:.25em}\
button,a.button{display:inline-block;padding:.3em .9em;border:1px solid #889;border-radius:4px;\
background:#fff;color:#1b1f24;text-decoration:none;cursor:pointer}\
button.danger{background:#b3261e;border-color:#b3261e;color:#fff}\
#token{width:100%;max-width:36em}\
.actions{display:flex;flex-wrap:wrap;gap:.6em 1em;align-items:center;margin:1em 0}\
.notice{padding:.6em 1em;border-radius:4px;background:#eef}\
.notice.ok{background:#e3f6e6}.notice.error{background:#fde8e8;color:#8a1111}\
.notice.warn{background:#fff4d6;color:#5c3d00}\
.badge{display:inline-block;padding:0 .4em;border-radius:3px;font-size:.85em;background:#dde}\
.badge.production{background:#d8ecff}.badge.sandbox{background:#fff0c9}\
.badge.up{background:#d6f5dc}.badge.down{background:#fbd5d5}.badge.idle{background:#e6e8ec;color:#3d4550}\
details{margin:1em 0}details>summary{cursor:pointer;font-weight:600}\
.secret{font-size:1.2em;background:#fff;border:2px dashed #c60;padding:.5em;display:block;overflow-wrap:anywhere}\
meter{width:100%;max-width:20em;height:1.4em}\
figure#qr{margin:0 0 1em}figure#qr svg{width:220px;height:220px;max-width:100%}\
dl.grid{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2em 1em}\
dl.grid dt{font-weight:600}dl.grid dd{margin:0;min-width:0;overflow-wrap:anywhere}\
@media (max-width:40em){\
header,nav{padding:.5em .6em}main{padding:.6em}\
dl.grid{grid-template-columns:minmax(0,1fr);gap:0}dl.grid dd{margin:0 0 .5em}\
label{display:block;margin-right:0}\
meter{display:block;margin:0 0 .3em}\
table.cards{border:0;background:none;width:100%}\
table.cards thead{display:none}\
table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}\
table.cards tr{background:#fff;border:1px solid #ccd;border-radius:4px;margin:0 0 .6em}\
table.cards td{border:0;border-bottom:1px solid #eef1f5;text-align:left;white-space:normal}\
table.cards td:last-child{border-bottom:0}\
table.cards td::before{content:attr(data-label) \": \";font-weight:600}\
:lang(fr) table.cards td::before{content:attr(data-label) \"\\00a0: \"}\
table.cards td[data-label=\"\"]::before{content:none}\
table.cards td code{white-space:normal}\
}\
";
