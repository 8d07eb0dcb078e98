package dev.eddy.gateway.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A self-signed server certificate for 127.0.0.1 and localhost, made by the JDK's own {@code keytool} (no other tool
 * needed on the machine) and written as the PEM files servers read: {@code cert.pem} and {@code key.pem} (PKCS#8,
 * owner-only, as PostgreSQL demands).
 *
 * @param cert the certificate, PEM
 * @param key  its private key, PEM
 */
public record TestCertificates(Path cert, Path key) {
    private static final String PASSWORD = "test-only-password";

    public static TestCertificates create(final Path directory) throws IOException, InterruptedException, GeneralSecurityException {
        final Path store = directory.resolve("server.p12");
        final Process keytool = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-dname", "CN=localhost", "-ext", "san=ip:127.0.0.1,dns:localhost",
                "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD))
                .redirectErrorStream(true).start();
        final String output = new String(keytool.getInputStream().readAllBytes());
        if (!keytool.waitFor(60, TimeUnit.SECONDS) || keytool.exitValue() != 0) {
            throw new IOException("keytool failed: " + output);
        }
        final KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keyStore.load(in, PASSWORD.toCharArray());
        }
        final Certificate certificate = keyStore.getCertificate("server");
        final PrivateKey key = (PrivateKey) keyStore.getKey("server", PASSWORD.toCharArray());
        final TestCertificates files = new TestCertificates(directory.resolve("cert.pem"), directory.resolve("key.pem"));
        Files.writeString(files.cert, pem("CERTIFICATE", certificate.getEncoded()));
        Files.writeString(files.key, pem("PRIVATE KEY", key.getEncoded()));
        Files.setPosixFilePermissions(files.key, PosixFilePermissions.fromString("rw-------"));
        return files;
    }

    /** A TLS context that trusts this certificate and nothing else. */
    public SSLContext trustingIt() throws IOException, GeneralSecurityException {
        final KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(cert)) {
            trust.setCertificateEntry("server", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        final TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(trust);
        final SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, factory.getTrustManagers(), null);
        return context;
    }

    private static String pem(final String type, final byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
