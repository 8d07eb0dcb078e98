package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestCertificates;
import dev.eddy.gateway.testing.TestEddy;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * PostgreSQL over TLS, set as libpq and the JDBC driver take it: {@code sslmode} and {@code sslrootcert} in
 * {@code pg.url}. With {@code verify-full} every connection Eddy makes (the migrations' JDBC one, the pool's, the one
 * listening for access changes) is encrypted and checks the server's certificate; a certificate from another authority
 * stops the start.
 */
@ExtendWith(SharedInfrastructure.class)
class PostgresTlsIT {
    @TempDir
    static Path certificates;
    @TempDir
    static Path otherAuthority;
    @TempDir
    Path state;
    private static TestCertificates server;
    private static EmbeddedPostgres postgres;

    @BeforeAll
    static void start() throws Exception {
        server = TestCertificates.create(certificates);
        postgres = EmbeddedPostgres.builder()
                .setServerConfig("ssl", "on")
                .setServerConfig("ssl_cert_file", server.cert().toString())
                .setServerConfig("ssl_key_file", server.key().toString())
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void everyConnectionIsEncryptedAndVerified(final Infrastructure infra) throws Exception {
        final String database = "eddy_tls";
        try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + database);
        }
        try (TestEddy eddy = TestEddy.start(infra, state, Map.of("EDDY_PG_URL", url(database, "verify-full", server.cert()),
                "EDDY_PG_USER", "postgres", "EDDY_PG_PASSWORD", "postgres"))) {
            final HttpResponse<String> projects = eddy.getAuthorized("/api/projects/");
            assertThat(projects.statusCode()).as(projects.body()).isEqualTo(200);
            assertThat(TestEddy.json(projects).path("results").path(0).path("api_token").asText()).isEqualTo(eddy.projectToken());
            try (Connection c = postgres.getPostgresDatabase().getConnection(); Statement s = c.createStatement();
                 ResultSet r = s.executeQuery("SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl) FROM pg_stat_ssl s "
                         + "JOIN pg_stat_activity a USING (pid) WHERE a.datname = '" + database + "'")) {
                r.next();
                assertThat(r.getInt(1)).as("Eddy's connections over TLS (pool and listener)").isGreaterThanOrEqualTo(2);
                assertThat(r.getInt(2)).as("Eddy's connections in the clear").isZero();
            }
        }
    }

    @Test
    void aServerCertificateFromAnotherAuthorityStopsTheStart(final Infrastructure infra) throws Exception {
        final TestCertificates stranger = TestCertificates.create(otherAuthority);
        assertThat(Files.readString(stranger.cert())).isNotEqualTo(Files.readString(server.cert()));
        assertThatThrownBy(() -> TestEddy.start(infra, state, Map.of("EDDY_PG_URL", url("postgres", "verify-full", stranger.cert()),
                "EDDY_PG_USER", "postgres", "EDDY_PG_PASSWORD", "postgres")))
                .hasStackTraceContaining("PKIX path");
    }

    private static String url(final String database, final String mode, final Path rootCert) {
        return "postgresql://127.0.0.1:" + postgres.getPort() + "/" + database + "?sslmode=" + mode + "&sslrootcert=" + rootCert;
    }
}
