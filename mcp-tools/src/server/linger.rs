//! The last reply on a connection that is about to be closed.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// How much of what the client sent is read and dropped before closing.
const DRAIN_BYTES: usize = 64 * 1024;

/// Write `reply`, shut down the writing side, then read and drop what the client sent (at
/// most 64 KiB), all within one second, so the close does not reset the connection before
/// the client reads the reply.
pub(crate) async fn reply_and_close<R, W>(read: &mut R, write: &mut W, reply: &[u8])
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        write.write_all(reply).await?;
        write.shutdown().await?;
        let mut sink = [0u8; 4096];
        let mut left = DRAIN_BYTES;
        while left > 0 {
            let n = read.read(&mut sink).await?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
}
