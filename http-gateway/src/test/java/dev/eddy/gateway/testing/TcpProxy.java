package dev.eddy.gateway.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP forwarder in front of a real server that a test can cut, as a crashed or unreachable server looks from the
 * client: {@link #cut} resets every open connection and refuses new ones; {@link #restore} accepts again on the same
 * port.
 */
public final class TcpProxy implements AutoCloseable {
    private final InetSocketAddress target;
    private final int port;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile ServerSocket server;

    private TcpProxy(final InetSocketAddress target, final int port) {
        this.target = target;
        this.port = port;
    }

    /** Forwards a new local port to {@code host:port}. */
    public static TcpProxy to(final String hostPort) throws IOException {
        final int colon = hostPort.lastIndexOf(':');
        final InetSocketAddress target = new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        final int port;
        try (ServerSocket probe = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        final TcpProxy proxy = new TcpProxy(target, port);
        proxy.restore();
        return proxy;
    }

    public String hostPort() {
        return "127.0.0.1:" + port;
    }

    /** Accepts and forwards connections (again). */
    public synchronized void restore() throws IOException {
        if (server != null) {
            return;
        }
        final ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        server = socket;
        final Thread acceptor = new Thread(() -> accept(socket), "tcp-proxy-accept-" + port);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Resets every forwarded connection and refuses new ones until {@link #restore}. */
    public synchronized void cut() throws IOException {
        if (server == null) {
            return;
        }
        server.close();
        server = null;
        for (final Socket s : open) {
            try {
                // A reset, not an orderly close: as a crashed server's connections end.
                s.setSoLinger(true, 0);
            } catch (final java.net.SocketException e) {
                // closed meanwhile by its pump
            }
            closeQuietly(s);
        }
        open.clear();
    }

    private void accept(final ServerSocket socket) {
        while (!socket.isClosed()) {
            try {
                final Socket client = socket.accept();
                final Socket upstream = new Socket();
                upstream.connect(target, 5_000);
                open.add(client);
                open.add(upstream);
                pump(client, upstream);
                pump(upstream, client);
            } catch (final IOException e) {
                // closed by cut(), or the target refused: the client sees its connection closed
            }
        }
    }

    private void pump(final Socket from, final Socket to) {
        final Thread thread = new Thread(() -> {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
            } catch (final IOException e) {
                // either side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "tcp-proxy-pump-" + port);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(final Socket socket) {
        try {
            socket.close();
        } catch (final IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        cut();
    }
}
