//! The accept loop: HTTP/1.1 connections with a request-head deadline, an optional cap on
//! connections per client address, and a drain deadline on shutdown.
//!
//! `axum::serve` has none of these: a client trickling its head held a connection (and, at
//! SIGTERM, the process) for as long as it liked.
//!
//! The connections run on the runtime that serves, or spread over [`CoreRuntimes`] (one
//! single-threaded runtime per core, `--runtime per-core`): each connection then stays on one
//! thread with its own upstream connections ([`crate::client`]), and no request wakes another
//! thread.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;

use crate::app::Dispatch;
use crate::config::{ProxyConfig, ProxyLimits};
use crate::self_wake::AbsorbSelfWakes;

/// Keeps a timer pending at most a second ahead, for as long as the proxy serves.
///
/// Tokio wakes its timer driver (a write to its event fd, and one more poll) whenever a timer
/// is set earlier than every pending one. With no timer pending, every request's timeouts (the
/// next head's deadline, the upstream read timeout) woke it: one syscall and one more
/// scheduler round per request. With this one pending, a timeout more than a second away
/// wakes nothing; a shorter one still does, as it must.
async fn keep_a_timer_pending() {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
    }
}

/// Serves `config` on `listener` until `shutdown` resolves, then stops accepting and lets the
/// requests in flight finish for at most the drain timeout before closing their connections.
///
/// # Errors
///
/// When the router cannot be built.
pub async fn serve_until(
    config: ProxyConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_until_on(config, listener, shutdown, &[]).await
}

/// [`serve_until`] with each connection run on one of `workers` (the one with the fewest
/// open connections; see [`CoreRuntimes`]), or on the current runtime when `workers` is
/// empty. Accepting, the limits and the drain are the same either way.
///
/// # Errors
///
/// When the router cannot be built.
pub async fn serve_until_on(
    mut config: ProxyConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    workers: &[Handle],
) -> std::io::Result<()> {
    if workers.is_empty() {
        // On the caller's runtime, whatever the setting: the per-thread upstream pools belong
        // with per-core runtimes only (on a shared one they cost memory and gained nothing).
        config.runtime = crate::config::Runtime::Shared;
    }
    let limits = config.limits.clone();
    let dispatch = Dispatch::new(config).map_err(std::io::Error::other)?;
    let peers = Peers::new(limits.max_connections_per_peer);
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    // Dropped (their tasks aborted) when serving ends, however it ends.
    let mut pending_timer = JoinSet::new();
    pending_timer.spawn(keep_a_timer_pending());
    for worker in workers {
        pending_timer.spawn_on(keep_a_timer_pending(), worker);
    }
    let open: Vec<Arc<AtomicUsize>> = workers.iter().map(|_| Arc::default()).collect();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of descriptors, or the peer left before accept: back off briefly.
                        tracing::debug!(%error, "accept failed");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                };
                let Some(slot) = peers.take(peer.ip()) else {
                    tracing::info!(%peer, "too many connections from one address: refused");
                    connections.spawn(refuse(stream));
                    continue;
                };
                let serving = Serving {
                    peer,
                    dispatch: dispatch.clone(),
                    limits: limits.clone(),
                    stopping: stopping.clone(),
                    slot,
                };
                // The handler hyper polls inside the connection's task wakes that task when it
                // takes the request body: polled again in place, not through another worker.
                let least_busy = workers
                    .iter()
                    .zip(&open)
                    .min_by_key(|(_, n)| n.load(Ordering::Relaxed));
                let Some((worker, count)) = least_busy else {
                    connections.spawn(AbsorbSelfWakes::new(connection(stream, serving)));
                    continue;
                };
                // Registered again with the worker's own I/O driver, so its readiness wakes
                // that worker and no other thread.
                let stream = match stream.into_std() {
                    Ok(stream) => stream,
                    Err(error) => {
                        tracing::debug!(%error, "could not move an accepted connection");
                        continue;
                    }
                };
                let counted = Counted::new(Arc::clone(count));
                connections.spawn_on(
                    AbsorbSelfWakes::new(async move {
                        let _counted = counted;
                        match TcpStream::from_std(stream) {
                            Ok(stream) => connection(stream, serving).await,
                            Err(error) => {
                                tracing::debug!(%error, "could not register a moved connection");
                            }
                        }
                    }),
                    worker,
                );
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    tracing::info!(
        open = connections.len(),
        "shutting down: draining requests in flight"
    );
    let _ = stop.send(true);
    let drained = tokio::time::timeout(limits.drain_timeout, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "drain deadline passed: closing the connections left"
        );
        connections.shutdown().await;
    }
    Ok(())
}

/// What one connection is served with.
struct Serving {
    peer: SocketAddr,
    dispatch: Dispatch,
    limits: ProxyLimits,
    stopping: watch::Receiver<bool>,
    /// Counts the connection against its address until it ends.
    slot: PeerSlot,
}

/// One open connection counted on its worker until dropped.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn new(count: Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::Relaxed);
        Self(count)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Serves one connection until it ends, or until shutdown (then the request in flight may
/// finish; an idle or half-sent head is closed).
async fn connection(stream: TcpStream, serving: Serving) {
    let Serving {
        peer,
        dispatch,
        limits,
        mut stopping,
        slot: _slot,
    } = serving;
    // Without TCP_NODELAY the small writes of a stream (one SSE event each) wait for the
    // client's delayed ACK: about 40 ms added to every streamed response on Linux.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%error, "could not set TCP_NODELAY on an accepted connection");
    }
    let service = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        let dispatch = dispatch.clone();
        async move {
            let response = dispatch.call(request.map(axum::body::Body::new)).await;
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        result = conn.as_mut() => {
            if let Err(error) = result {
                tracing::debug!(%error, "connection ended with an error");
            }
            return;
        }
        _ = stopping.wait_for(|stop| *stop) => conn.as_mut().graceful_shutdown(),
    }
    if let Err(error) = conn.await {
        tracing::debug!(%error, "connection ended with an error while draining");
    }
}

/// One single-threaded tokio runtime per core, each on its own thread, for
/// [`serve_until_on`]; stopped and joined when dropped (drop it outside any runtime).
#[derive(Debug)]
pub struct CoreRuntimes {
    handles: Vec<Handle>,
    stops: Vec<oneshot::Sender<()>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl CoreRuntimes {
    /// `count` runtimes (at least one), with I/O and timers.
    ///
    /// # Errors
    ///
    /// When a runtime or its thread cannot be started.
    pub fn start(count: usize) -> std::io::Result<Self> {
        let mut cores = Self {
            handles: Vec::new(),
            stops: Vec::new(),
            threads: Vec::new(),
        };
        for index in 0..count.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (stop, stopped) = oneshot::channel::<()>();
            cores.handles.push(runtime.handle().clone());
            cores.stops.push(stop);
            cores.threads.push(
                std::thread::Builder::new()
                    .name(format!("toolmend-core-{index}"))
                    .spawn(move || {
                        let _ = runtime.block_on(stopped);
                    })?,
            );
        }
        Ok(cores)
    }

    /// The runtimes' handles, for [`serve_until_on`].
    #[must_use]
    pub fn handles(&self) -> &[Handle] {
        &self.handles
    }
}

impl Drop for CoreRuntimes {
    fn drop(&mut self) {
        for stop in self.stops.drain(..) {
            let _ = stop.send(());
        }
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Answers a connection over the per-address cap with a 503 and closes it.
async fn refuse(mut stream: TcpStream) {
    let answer = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\
        content-length: 42\r\nconnection: close\r\n\r\ntoolmend: too many connections from you\r\n\r\n";
    let _ = stream.write_all(answer).await;
    let _ = stream.shutdown().await;
}

/// Open connections per client address.
#[derive(Debug, Clone)]
struct Peers {
    max: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Peers {
    fn new(max: usize) -> Self {
        Self {
            max,
            open: Arc::default(),
        }
    }

    /// A slot for one more connection from `ip`, `None` at the cap (never with no cap).
    fn take(&self, ip: IpAddr) -> Option<PeerSlot> {
        if self.max == 0 {
            return Some(PeerSlot(None));
        }
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(ip).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(PeerSlot(Some((self.clone(), ip))))
    }
}

/// One connection counted against its address until dropped.
#[derive(Debug)]
struct PeerSlot(Option<(Peers, IpAddr)>);

impl Drop for PeerSlot {
    fn drop(&mut self) {
        if let Some((peers, ip)) = self.0.take() {
            let mut open = peers.open.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(count) = open.get_mut(&ip) {
                *count -= 1;
                if *count == 0 {
                    open.remove(&ip);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_gets_at_most_its_cap_and_slots_come_back() {
        let peers = Peers::new(2);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let a = peers.take(ip).unwrap();
        let _b = peers.take(ip).unwrap();
        assert!(peers.take(ip).is_none());
        assert!(peers.take("10.0.0.2".parse().unwrap()).is_some());
        drop(a);
        assert!(peers.take(ip).is_some());
        assert!(Peers::new(0).take(ip).is_some());
    }
}
