//! The request body the endpoint reads, whatever body type the server in front gives it.

use bytes::{Buf, Bytes};
use hyper::body::Body;

/// The error type of request bodies the endpoint reads.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request body as the endpoint reads it: its data as [`Bytes`], its error wrapped.
pub(super) type RequestBody = http_body_util::combinators::UnsyncBoxBody<Bytes, BodyError>;

/// Why reading a request body failed (a concrete type: a bare boxed error in the body's
/// type trips the compiler's proof that the endpoint's futures are `Send`).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub(super) struct BodyError(BoxError);

/// `body` as a [`RequestBody`].
pub(super) fn into_bytes_body<B>(body: B) -> RequestBody
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    use http_body_util::BodyExt;
    body.map_frame(|frame| frame.map_data(|mut data| data.copy_to_bytes(data.remaining())))
        .map_err(|error| BodyError(error.into()))
        .boxed_unsync()
}
