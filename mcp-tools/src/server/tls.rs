//! TLS for the HTTP transport: a certificate chain and private key from PEM files, served
//! with rustls, reloadable while the server runs ([`TlsConfig::reload`]; the command line
//! reloads on `SIGHUP`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use super::private_file::{self, ExposedFile};

/// A server certificate and key for HTTPS, read from PEM files.
///
/// The certificate file holds the chain, leaf first; the key file one private key (PKCS#8,
/// PKCS#1 or SEC1) and, like a tokens file, must be private to its owner (`chmod 600`).
/// Connections use TLS 1.2 or 1.3 and ALPN `http/1.1`. [`reload`](Self::reload) reads
/// the files again: new connections use the new pair, open ones keep theirs, and a pair
/// that fails to load leaves the old one in use.
///
/// ```no_run
/// use mcp_toolbelt::server::{HttpOptions, Server, TlsConfig};
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let tls = TlsConfig::from_pem_files("/etc/mcp/cert.pem", "/etc/mcp/key.pem")?;
/// let registry = mcp_toolbelt::ToolRegistry::builder().build()?;
/// Server::new(registry)
///     .serve_http("0.0.0.0:8443".parse()?, HttpOptions::default().tokens_file("tokens")?.tls(tls))
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct TlsConfig {
    cert: PathBuf,
    key: PathBuf,
    current: Arc<ArcSwap<ServerConfig>>,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("cert", &self.cert)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// Why a certificate or key could not be used; names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Group or others have some access to the key file.
    #[error(transparent)]
    Exposed(ExposedFile),
    /// The file holds no usable PEM item of the kind expected.
    #[error("{}: {problem}", path.display())]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong.
        problem: String,
    },
    /// rustls refused the pair (e.g. the key does not match the certificate).
    #[error("the certificate {} and key {} cannot be used together: {problem}", cert.display(), key.display())]
    Mismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls' reason.
        problem: String,
    },
}

impl TlsConfig {
    /// Read the certificate chain from `cert` and the private key from `key` (PEM).
    pub fn from_pem_files(
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsConfig, TlsError> {
        let (cert, key) = (cert.as_ref().to_path_buf(), key.as_ref().to_path_buf());
        let config = load(&cert, &key)?;
        Ok(TlsConfig {
            cert,
            key,
            current: Arc::new(ArcSwap::from_pointee(config)),
        })
    }

    /// Read both files again and use the new pair for new connections. On error the pair in
    /// use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let config = load(&self.cert, &self.key)?;
        self.current.store(Arc::new(config));
        Ok(())
    }

    /// The acceptor for the next connection (the pair loaded last).
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.current.load_full())
    }
}

fn load(cert: &Path, key: &Path) -> Result<ServerConfig, TlsError> {
    let cert_text = std::fs::read(cert).map_err(|source| TlsError::Read {
        path: cert.to_path_buf(),
        source,
    })?;
    let chain = CertificateDer::pem_slice_iter(&cert_text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| TlsError::Pem {
            path: cert.to_path_buf(),
            problem: format!("not a PEM certificate chain: {error}"),
        })?;
    if chain.is_empty() {
        return Err(TlsError::Pem {
            path: cert.to_path_buf(),
            problem: "no CERTIFICATE block".into(),
        });
    }
    let key_text = private_file::read(key, "TLS key file").map_err(|refused| match refused {
        private_file::Refused::Io(source) => TlsError::Read {
            path: key.to_path_buf(),
            source,
        },
        private_file::Refused::Exposed(exposed) => TlsError::Exposed(exposed),
    })?;
    let private_key =
        PrivateKeyDer::from_pem_slice(key_text.as_bytes()).map_err(|error| TlsError::Pem {
            path: key.to_path_buf(),
            problem: format!("no usable private key (PKCS#8, PKCS#1 or SEC1): {error}"),
        })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| {
            builder
                .with_no_client_auth()
                .with_single_cert(chain, private_key)
        })
        .map_err(|error| TlsError::Mismatch {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            problem: error.to_string(),
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}
