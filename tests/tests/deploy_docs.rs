//! The deployment documents, read literally and run (`docs/deploy.md`, `deploy/`):
//!
//! - the state-key recipe of `docs/deploy.md`, run as written, makes a key the server takes;
//! - the replica command line of `docs/deploy.md`, run as written (with local addresses and
//!   files), serves the public name it allows and refuses others;
//! - `deploy/k8s/quickstart.yaml` passes the Kubernetes 1.30 API schema in strict mode
//!   (kubernetes-validate, from `scripts/python/requirements-deploy.txt`), meets the Pod
//!   Security Standard "restricted", has a PodDisruptionBudget for its pods, and its `serve`
//!   arguments, run against the quickstart binary, accept a request under every name of
//!   its Service;
//! - `deploy/nginx.conf`, as shipped, in front of three replicas (Debian's nginx, installed
//!   by `scripts/setup-nginx.sh`): calls spread over all three, and no call fails while one
//!   replica drains after SIGTERM and after another is killed.

mod balancer_common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use balancer_common::{free_port, header, post_call, post_mcp, start_draining};
use mcp_toolbelt_tests::{
    ServerProcess, python, quickstart, scratch_dir, scratch_file, workspace_root,
};
use serde_json::Value;

const TOKEN: &str = "deploy-docs-4b1f";

fn deploy_md() -> String {
    std::fs::read_to_string(workspace_root().join("docs/deploy.md")).expect("docs/deploy.md")
}

fn manifest_path() -> PathBuf {
    workspace_root().join("deploy/k8s/quickstart.yaml")
}

/// The state-key recipe `docs/deploy.md` gives, as written.
fn state_key_recipe() -> String {
    let doc = deploy_md();
    let line = doc
        .lines()
        .find(|line| line.contains("head -c 48 /dev/urandom"))
        .expect("docs/deploy.md gives a state-key recipe");
    let start = line.find("`(").expect("the recipe in backquotes") + 1;
    let end = start + line[start..].find('`').expect("a closing backquote");
    line[start..end].to_string()
}

/// Run the recipe in a fresh directory under the default umask of a login shell (022);
/// the key file it made.
fn state_key_from_the_recipe(dir: &str) -> PathBuf {
    let dir = scratch_dir(dir);
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("umask 022; {}", state_key_recipe()))
        .current_dir(&dir)
        .status()
        .expect("sh runs");
    assert!(status.success(), "the recipe failed: {status}");
    dir.join("state-key")
}

#[test]
fn the_state_key_recipe_makes_a_key_the_server_takes() {
    let key = state_key_from_the_recipe("recipe");
    let server = ServerProcess::start_cli_http(
        &quickstart(),
        &[
            "serve",
            "--http",
            "127.0.0.1:0",
            "--state-key-file",
            key.to_str().expect("a UTF-8 temp path"),
        ],
    );
    assert!(
        !server.stderr().contains("error"),
        "the key was taken: {}",
        server.stderr()
    );
    // The manifest's comment gives the same recipe for the Secret's file.
    let manifest = std::fs::read_to_string(manifest_path()).expect("the manifest");
    assert!(manifest.contains(&state_key_recipe()), "one recipe");
}

/// `docs/deploy.md`'s replica command line (the `sh` block after "Each replica's command
/// line"), continuation lines joined, split into words.
fn replica_command_line() -> Vec<String> {
    let doc = deploy_md();
    let after = doc
        .split_once("Each replica's command line")
        .expect("docs/deploy.md shows a replica's command line")
        .1;
    let block = after
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("an sh block")
        .0;
    block
        .replace("\\\n", " ")
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_replica_command_line_serves_its_public_name() {
    let words = replica_command_line();
    assert_eq!(words[0], "quickstart-mcp", "{words:?}");
    let tokens = scratch_file("deploy-docs.tokens", &format!("{TOKEN} ADMIN\n"));
    let key = state_key_from_the_recipe("replica");
    let args: Vec<String> = words[1..]
        .iter()
        .map(|word| match word.as_str() {
            "10.0.0.11:8080" => "127.0.0.1:0".to_string(),
            "tokens" => tokens.to_str().expect("UTF-8").to_string(),
            "state-key" => key.to_str().expect("UTF-8").to_string(),
            _ => word.clone(),
        })
        .collect();
    for flag in [
        "--tokens-file",
        "--state-key-file",
        "--allow-host",
        "--stateless",
    ] {
        assert!(args.iter().any(|arg| arg == flag), "{flag} in {words:?}");
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let replica = ServerProcess::start_cli_http(&quickstart(), &args);
    let public = args[args
        .iter()
        .position(|a| *a == "--allow-host")
        .expect("--allow-host")
        + 1];
    let response = list_tools(replica.authority(), public);
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert_eq!(
        header(&response, "mcp-replica").as_deref(),
        Some("replica-1")
    );
    let response = list_tools(replica.authority(), "elsewhere.example.com");
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
}

/// `tools/list` as the test's token, with `Host: host`; the whole response.
fn list_tools(authority: &str, host: &str) -> String {
    post_mcp(
        authority,
        Some(host),
        TOKEN,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    )
}

/// `kubernetes-validate --strict` against the 1.30 API on `manifest`: (passed, output).
fn kubernetes_validate(manifest: &Path) -> (bool, String) {
    let output = Command::new(python())
        .args(["-m", "kubernetes_validate", "--strict", "-k", "1.30.0"])
        .arg(manifest)
        .output()
        .expect("the venv's python runs (scripts/setup-python.sh)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

#[test]
fn the_kubernetes_manifest_passes_the_api_schema_in_strict_mode() {
    let (passed, text) = kubernetes_validate(&manifest_path());
    assert!(passed, "{text}");
    for kind in ["namespace", "deployment", "service", "poddisruptionbudget"] {
        assert!(
            text.contains(&format!("passed for resource {kind}/")),
            "{kind}: {text}"
        );
    }
    // The check is strict: a misspelt field fails it.
    let manifest = std::fs::read_to_string(manifest_path()).expect("the manifest");
    let misspelt = scratch_dir("k8s").join("misspelt.yaml");
    std::fs::write(
        &misspelt,
        manifest.replacen("readinessProbe:", "readinesProbe:", 1),
    )
    .expect("writable");
    let (passed, text) = kubernetes_validate(&misspelt);
    assert!(!passed, "{text}");
}

/// The manifest's documents, as JSON (read by the venv's PyYAML).
fn manifest_documents() -> Vec<Value> {
    let output = Command::new(python())
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
        ])
        .arg(manifest_path())
        .output()
        .expect("the venv's python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

fn document<'a>(documents: &'a [Value], kind: &str) -> &'a Value {
    documents
        .iter()
        .find(|document| document["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in the manifest"))
}

/// A container's setting `name` in its `securityContext`, else the pod's.
fn effective<'a>(pod: &'a Value, container: &'a Value, name: &str) -> &'a Value {
    match &container["securityContext"][name] {
        Value::Null => &pod["securityContext"][name],
        value => value,
    }
}

#[test]
fn the_kubernetes_manifest_meets_pod_security_restricted() {
    // The rules of the Pod Security Standards' "restricted" profile (kubernetes.io,
    // "Pod Security Standards"), baseline's included, for what this manifest uses.
    let documents = manifest_documents();
    let namespace = document(&documents, "Namespace");
    assert_eq!(
        namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
        "restricted"
    );
    let deployment = document(&documents, "Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        assert!(pod[host].is_null() || pod[host] == false, "{host}");
    }
    let allowed_volumes = [
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    for volume in pod["volumes"].as_array().expect("volumes") {
        let kinds: Vec<&String> = volume
            .as_object()
            .expect("a volume")
            .keys()
            .filter(|key| *key != "name")
            .collect();
        assert!(
            kinds
                .iter()
                .all(|kind| allowed_volumes.contains(&kind.as_str())),
            "{volume}"
        );
    }
    let containers: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .flat_map(|list| pod[*list].as_array().into_iter().flatten())
        .collect();
    assert_eq!(containers.len(), 2, "the init container and the server");
    for container in containers {
        let name = &container["name"];
        let context = &container["securityContext"];
        assert_eq!(
            context["allowPrivilegeEscalation"], false,
            "{name}: allowPrivilegeEscalation"
        );
        assert!(context["privileged"].is_null() || context["privileged"] == false);
        assert_eq!(effective(pod, container, "runAsNonRoot"), true, "{name}");
        let user = effective(pod, container, "runAsUser");
        assert!(user.as_u64().is_some_and(|uid| uid != 0), "{name}: {user}");
        let seccomp = &effective(pod, container, "seccompProfile")["type"];
        assert!(
            seccomp == "RuntimeDefault" || seccomp == "Localhost",
            "{name}: seccompProfile {seccomp}"
        );
        let capabilities = &context["capabilities"];
        assert_eq!(capabilities["drop"], serde_json::json!(["ALL"]), "{name}");
        let added = capabilities["add"].as_array().cloned().unwrap_or_default();
        assert!(
            added.iter().all(|cap| cap == "NET_BIND_SERVICE"),
            "{name}: {added:?}"
        );
        for port in container["ports"].as_array().into_iter().flatten() {
            assert!(port["hostPort"].is_null(), "{name}: hostPort");
        }
    }

    // Voluntary disruptions: a budget for exactly these pods.
    let budget = document(&documents, "PodDisruptionBudget");
    assert_eq!(
        budget["spec"]["selector"]["matchLabels"],
        deployment["spec"]["selector"]["matchLabels"]
    );
    assert_eq!(
        budget["metadata"]["namespace"],
        deployment["metadata"]["namespace"]
    );
    assert!(
        budget["spec"]["maxUnavailable"].is_number() || budget["spec"]["minAvailable"].is_number()
    );
}

#[test]
fn the_kubernetes_serve_arguments_accept_every_name_of_the_service() {
    let documents = manifest_documents();
    let deployment = document(&documents, "Deployment");
    let server = deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .and_then(|containers| containers.first())
        .expect("the server container");
    let tokens = scratch_file("deploy-docs-k8s.tokens", &format!("{TOKEN} ADMIN\n"));
    let key = state_key_from_the_recipe("k8s-key");
    let args: Vec<String> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|arg| {
            let arg = arg.as_str().expect("a string");
            match arg.split_once('=') {
                Some(("--http", _)) => "--http=127.0.0.1:0".to_string(),
                Some(("--tokens-file", _)) => format!("--tokens-file={}", tokens.display()),
                Some(("--state-key-file", _)) => format!("--state-key-file={}", key.display()),
                // Kubernetes expands $(POD_NAME) from the env entry.
                _ => arg.replace("$(POD_NAME)", "quickstart-mcp-7d9f-x2x4q"),
            }
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let replica = ServerProcess::start_cli_http(&quickstart(), &args);

    // Every name a client in the cluster may use for the Service, with and without its
    // port (kubernetes.io, "DNS for Services and Pods").
    let service = document(&documents, "Service");
    let name = service["metadata"]["name"].as_str().expect("a name");
    let namespace = service["metadata"]["namespace"]
        .as_str()
        .expect("a namespace");
    let port = service["spec"]["ports"][0]["port"]
        .as_u64()
        .expect("a port");
    let names = [
        name.to_string(),
        format!("{name}.{namespace}"),
        format!("{name}.{namespace}.svc"),
        format!("{name}.{namespace}.svc.cluster.local"),
    ];
    for host in names
        .iter()
        .flat_map(|name| [name.clone(), format!("{name}:{port}")])
    {
        let response = list_tools(replica.authority(), &host);
        assert!(
            response.starts_with("HTTP/1.1 200"),
            "Host {host}: {response}"
        );
        assert_eq!(
            header(&response, "mcp-replica").as_deref(),
            Some("quickstart-mcp-7d9f-x2x4q")
        );
    }
    let response = list_tools(replica.authority(), "quickstart-mcp.other");
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
}

/// The nginx binary: `MCP_TOOLBELT_NGINX`, else Debian's `/usr/sbin/nginx`.
fn nginx_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("MCP_TOOLBELT_NGINX") {
        return PathBuf::from(path);
    }
    let debian = PathBuf::from("/usr/sbin/nginx");
    assert!(
        debian.exists(),
        "nginx is not installed; run scripts/setup-nginx.sh (installs Debian's nginx) or set \
         MCP_TOOLBELT_NGINX"
    );
    debian
}

/// nginx running `deploy/nginx.conf` as shipped, but for the replicas' and its own
/// addresses; killed when dropped.
struct Nginx {
    child: Child,
    authority: String,
    prefix: PathBuf,
}

impl Nginx {
    fn start(replicas: &[&ServerProcess]) -> Nginx {
        let shipped = std::fs::read_to_string(workspace_root().join("deploy/nginx.conf"))
            .expect("deploy/nginx.conf");
        let prefix = scratch_dir("nginx");
        std::fs::create_dir_all(prefix.join("logs")).expect("writable");
        let port = free_port();
        let mut config = shipped.replace("listen 8080;", &format!("listen 127.0.0.1:{port};"));
        for (n, replica) in replicas.iter().enumerate() {
            let shipped_address = format!("10.0.0.1{}:8080", n + 1);
            assert!(config.contains(&shipped_address), "{shipped_address}");
            config = config.replace(&shipped_address, replica.authority());
        }
        let path = prefix.join("nginx.conf");
        std::fs::write(&path, config).expect("writable");
        let global = format!(
            "daemon off; master_process on; worker_processes 1; pid {}; error_log stderr notice;",
            prefix.join("nginx.pid").display()
        );
        let child = Command::new(nginx_binary())
            .arg("-p")
            .arg(&prefix)
            .arg("-c")
            .arg(&path)
            .args(["-g", &global])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let authority = format!("127.0.0.1:{port}");
        let started = Instant::now();
        while std::net::TcpStream::connect(&authority).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nginx did not listen on {authority}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Nginx {
            child,
            authority,
            prefix,
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.prefix);
    }
}

/// `count` echo calls through `balancer`, a little apart; the replicas that answered.
/// Panics on the first call that fails.
fn echo_calls(balancer: &str, count: u64, label: &str) -> BTreeSet<String> {
    (0..count)
        .map(|n| {
            let response = post_call(balancer, TOKEN, 100 + n, "echo", r#"{"message":"hi"}"#);
            assert!(
                response.starts_with("HTTP/1.1 200") && response.contains("\"result\""),
                "{label}: call {n} failed: {response}"
            );
            std::thread::sleep(Duration::from_millis(30));
            header(&response, "mcp-replica").expect("Mcp-Replica")
        })
        .collect()
}

#[test]
fn nginx_as_shipped_spreads_calls_and_loses_none_to_a_draining_or_killed_replica() {
    let tokens = scratch_file("deploy-docs-nginx.tokens", &format!("{TOKEN} ADMIN\n"));
    let slow_tools = Path::new(env!("CARGO_BIN_EXE_slow-tools"));
    let replica = |id: &str, addr: &str| {
        ServerProcess::start_cli_http(
            slow_tools,
            &[
                "serve",
                "--http",
                addr,
                "--stateless",
                "--replica-id",
                id,
                "--tokens-file",
                tokens.to_str().expect("UTF-8"),
                "--shutdown-grace",
                "4s",
            ],
        )
    };
    let mut replicas: Vec<ServerProcess> = ["replica-a", "replica-b", "replica-c"]
        .iter()
        .map(|id| replica(id, "127.0.0.1:0"))
        .collect();
    let nginx = Nginx::start(&replicas.iter().collect::<Vec<_>>());
    let all = echo_calls(&nginx.authority, 9, "three replicas");
    assert_eq!(all.len(), 3, "round-robin over all three: {all:?}");

    // replica-a drains (SIGTERM with a call of its own that never ends): its `503`s are
    // sent on to the others (`http_503`).
    let (endless, signalled) = start_draining(&replicas[0], TOKEN);
    let during = echo_calls(&nginx.authority, 12, "replica-a draining");
    assert!(!during.contains("replica-a"), "{during:?}");
    assert!(
        signalled.elapsed() < Duration::from_secs(4),
        "the calls ran while replica-a drained"
    );
    let cut_short = endless.join().expect("an answer");
    assert!(cut_short.contains("\"code\":-32603"), "{cut_short}");
    assert!(replicas[0].wait_exit(Duration::from_secs(5)).is_some());
    // The rolling restart goes on: replica-a is back on its port.
    let addr = replicas[0].authority().to_string();
    replicas[0] = replica("replica-a", &addr);

    // replica-b is killed: its pooled connections die (`error`, `non_idempotent`).
    drop(replicas.remove(1));
    let after = echo_calls(&nginx.authority, 12, "replica-b killed");
    assert!(!after.contains("replica-b"), "{after:?}");
}
