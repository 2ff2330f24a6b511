//! The media the scenarios send: a 1x1 red PNG and a short 440 Hz WAV tone (files in
//! `assets/`, generated for this example).

use base64::Engine;

/// A 1x1 red pixel, PNG.
pub const PNG: &[u8] = include_bytes!("../assets/red-pixel.png");

/// 0.1 s of a 440 Hz tone, 8 kHz mono 16-bit PCM WAV.
pub const WAV: &[u8] = include_bytes!("../assets/tone.wav");

/// `bytes` as standard base64, the way MCP carries image and audio data.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
