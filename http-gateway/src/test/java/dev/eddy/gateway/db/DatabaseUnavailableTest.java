package dev.eddy.gateway.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class DatabaseUnavailableTest {
    @Test
    void aConnectionLostMidReadIsTheDatabaseUnavailableButOtherFailuresAreNot() {
        // NIO reports a reset connection as a plain IOException (seen when PostgresOutageIT cut the database mid-query).
        assertThat(Database.unavailable(new IOException("Connection reset by peer"))).isTrue();
        assertThat(Database.unavailable(new RuntimeException("query failed", new IOException("Broken pipe")))).isTrue();
        assertThat(Database.unavailable(new java.net.ConnectException("Connection refused"))).isTrue();
        assertThat(Database.unavailable(new IOException("No space left on device"))).isFalse();
        assertThat(Database.unavailable(new IllegalStateException("a bug"))).isFalse();
        assertThat(Database.unavailable(new io.vertx.pgclient.PgException("syntax error", "ERROR", "42601", "detail"))).isFalse();
    }
}
