package dev.eddy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.config.PostgresConfig;
import dev.eddy.gateway.auth.ApiKeys;
import dev.eddy.gateway.streams.InternalSecret;
import dev.eddy.gateway.testing.Infrastructure;
import dev.eddy.gateway.testing.SharedInfrastructure;
import dev.eddy.gateway.testing.TestEddy;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Secrets stay secret: personal API keys are stored as their hash only (no column of any table holds one), and no
 * secret, valid or not, reaches a log line, its arguments or an exception's text while Eddy starts and serves
 * authenticated requests of every kind. Eddy's, Vert.x's and Netty's loggers log at DEBUG meanwhile.
 */
@ExtendWith(SharedInfrastructure.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SecretsIT {
    private static final String INTERNAL_SECRET = "internal-" + ApiKeys.newInternalSecret();
    private static final String BOOTSTRAP_KEY = ApiKeys.newPersonalKey();
    private static final String BOOTSTRAP_TOKEN = ApiKeys.newProjectToken();
    private static final List<String> VERBOSE = List.of("dev.eddy", "io.vertx", "io.netty", "org.flywaydb");

    @TempDir
    static Path stateDir;
    private static TestEddy eddy;
    private static final ListAppender<ILoggingEvent> LOGGED = new ListAppender<>();
    private static final Map<String, Level> LEVELS = new LinkedHashMap<>();

    @BeforeAll
    static void start(final Infrastructure infra) throws Exception {
        final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        LOGGED.start();
        root.addAppender(LOGGED);
        for (final String name : VERBOSE) {
            final Logger logger = (Logger) LoggerFactory.getLogger(name);
            LEVELS.put(name, logger.getLevel());
            logger.setLevel(Level.DEBUG);
        }
        eddy = TestEddy.start(infra, stateDir, Map.of(
                "EDDY_HTTP_INTERNAL_SECRET", INTERNAL_SECRET,
                "EDDY_BOOTSTRAP_PERSONAL_API_KEY", BOOTSTRAP_KEY,
                "EDDY_BOOTSTRAP_PROJECT_TOKEN", BOOTSTRAP_TOKEN));
    }

    @AfterAll
    static void stop() {
        if (eddy != null) {
            eddy.close();
        }
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(LOGGED);
        LEVELS.forEach((name, level) -> ((Logger) LoggerFactory.getLogger(name)).setLevel(level));
    }

    @Test
    void personalKeysAreStoredOnlyAsTheirHash() throws Exception {
        final JsonNode created = TestEddy.json(eddy.request(BOOTSTRAP_KEY, "POST", "/api/personal_api_keys/",
                "{\"label\":\"stored\",\"scopes\":[\"insight:read\"]}"));
        final String key = created.get("value").asText();
        assertThat(eddy.request(key, "GET", "/api/projects/1/insights/", null).statusCode()).isEqualTo(200);

        final List<String> values = everyValueInTheDatabase(eddy.eddy().config().pg());

        assertThat(values).contains(ApiKeys.hash(key), ApiKeys.hash(BOOTSTRAP_KEY), ApiKeys.mask(key));
        assertThat(values).noneMatch(v -> v.contains(key) || v.contains(BOOTSTRAP_KEY)
                || v.contains(key.substring(ApiKeys.PERSONAL_PREFIX.length())));
    }

    @Test
    void noSecretReachesTheLogs() {
        final String key = TestEddy.json(eddy.request(BOOTSTRAP_KEY, "POST", "/api/personal_api_keys/",
                "{\"label\":\"logged\",\"scopes\":[\"*\"]}")).get("value").asText();
        final JsonNode revoked = TestEddy.json(eddy.request(BOOTSTRAP_KEY, "POST", "/api/personal_api_keys/",
                "{\"label\":\"revoked\",\"scopes\":[\"*\"]}"));
        eddy.request(BOOTSTRAP_KEY, "DELETE", "/api/personal_api_keys/" + revoked.get("id").asText() + "/", null);
        final String revokedKey = revoked.get("value").asText();
        final String wrongKey = ApiKeys.newPersonalKey();
        final String wrongToken = ApiKeys.newProjectToken();
        final String wrongSecret = "wrong-" + ApiKeys.newInternalSecret();
        final List<String> secrets = List.of(BOOTSTRAP_KEY, key, revokedKey, wrongKey, BOOTSTRAP_TOKEN, wrongToken, INTERNAL_SECRET, wrongSecret);
        LOGGED.list.clear();

        for (final String personal : List.of(key, revokedKey, wrongKey, "Basic " + wrongKey)) {
            final String header = personal.startsWith("Basic ") ? personal : "Bearer " + personal;
            eddy.get("/api/projects/1/dashboards/", Map.of("Authorization", header));
            eddy.get("/api/projects/?personal_api_key=" + personal.replace(' ', '+'), Map.of());
            eddy.get("/api/feature_flag/local_evaluation/?token=" + BOOTSTRAP_TOKEN, Map.of("Authorization", header));
            eddy.get("/flags/definitions?token=" + wrongToken, Map.of("Authorization", header));
            eddy.get("/api/projects/1/persons/?distinct_id=" + personal.replace(' ', '+'), Map.of("Authorization", "Bearer " + key));
        }
        for (final String token : List.of(BOOTSTRAP_TOKEN, wrongToken)) {
            final String event = "{\"api_key\":\"" + token + "\",\"event\":\"e\",\"distinct_id\":\"d\"}";
            eddy.post("/e/", event);
            eddy.post("/batch/", "{\"api_key\":\"" + token + "\",\"batch\":[{\"event\":\"e\",\"distinct_id\":\"d\"}]}");
            eddy.post("/e/?token=" + token, "not json at all " + token);
            eddy.get("/e/?data=" + URLEncoder.encode(Base64.getEncoder().encodeToString(event.getBytes(StandardCharsets.UTF_8)),
                    StandardCharsets.UTF_8) + "&token=" + token, Map.of());
            eddy.post("/decide/?v=3", "{\"token\":\"" + token + "\",\"distinct_id\":\"d\"}");
            eddy.post("/flags/?v=2&api_key=" + token, "{\"api_key\":\"" + token + "\",\"distinct_id\":\"d\",\"groups\":{\"x\":\"" + token + "\"}}");
            eddy.post("/decide/?v=3", "{\"token\":\"" + token + "\",\"distinct_id\":");
        }
        for (final String secret : List.of(INTERNAL_SECRET, wrongSecret)) {
            eddy.get("/_internal/stores/persons/get?key=x&partition=0", Map.of(InternalSecret.HEADER, secret));
            eddy.send(java.net.http.HttpRequest.newBuilder(eddy.uri("/_internal/scatter/persons"))
                    .header(InternalSecret.HEADER, secret).POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"secret\":\"" + secret + "\"}"))
                    .build());
        }

        final List<String> texts = new ArrayList<>();
        for (final ILoggingEvent event : LOGGED.list) {
            texts.add(event.getFormattedMessage());
            texts.add(event.getMessage());
            if (event.getArgumentArray() != null) {
                for (final Object argument : event.getArgumentArray()) {
                    texts.add(String.valueOf(argument));
                }
            }
            for (IThrowableProxy thrown = event.getThrowableProxy(); thrown != null; thrown = thrown.getCause()) {
                texts.add(thrown.getClassName() + ": " + thrown.getMessage());
            }
            texts.addAll(event.getMDCPropertyMap().values());
        }
        // Vert.x logs every failed request with its error at DEBUG: the refusals of the keys and tokens above are there.
        assertThat(texts).as("the refusals were logged").anyMatch(text -> text != null && text.contains("Personal API key is invalid."))
                .anyMatch(text -> text != null && text.contains("Project API key invalid."));
        for (final String secret : secrets) {
            assertThat(texts).as("no log line holds a secret").noneMatch(text -> text != null && text.contains(secret));
        }
    }

    /** Last: it leaves this address blocked for every key. */
    @Test
    @Order(Integer.MAX_VALUE)
    void guessesOfTheInternalSecretAreThrottledPerAddress() {
        final String path = "/_internal/stores/persons/get?key=x&partition=0";
        int unauthorized = 0;
        HttpResponse<String> last = null;
        for (int i = 0; i < 35; i++) {
            last = eddy.get(path, Map.of(InternalSecret.HEADER, "guess-" + i + "-" + ApiKeys.newInternalSecret()));
            if (last.statusCode() == 401) {
                unauthorized++;
            }
        }

        // The default burst is 30, and noSecretReachesTheLogs failed 19 from this address: 12 personal keys (revoked,
        // unknown, Basic; four routes each, the personal_api_key query parameter among them), 5 unknown project tokens,
        // 2 wrong internal secrets.
        assertThat(unauthorized).isEqualTo(11);
        assertThat(last.statusCode()).isEqualTo(429);
        assertThat(last.headers().firstValue("Retry-After")).contains("2");
        assertThat(eddy.get(path, Map.of(InternalSecret.HEADER, INTERNAL_SECRET)).statusCode())
                .as("the address is blocked, the right secret included").isEqualTo(429);
    }

    /** Every column of every row of every table of Eddy's schema, as text. */
    private static List<String> everyValueInTheDatabase(final PostgresConfig pg) throws Exception {
        final List<String> values = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password())) {
            final List<String> tables = new ArrayList<>();
            try (ResultSet rs = c.getMetaData().getTables(null, "public", "%", new String[] {"TABLE"})) {
                while (rs.next()) {
                    tables.add(rs.getString("TABLE_NAME"));
                }
            }
            assertThat(tables).contains("personal_api_keys", "users", "projects");
            for (final String table : tables) {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM \"" + table + "\"")) {
                    while (rs.next()) {
                        for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                            final String value = rs.getString(i);
                            if (value != null) {
                                values.add(value);
                            }
                        }
                    }
                }
            }
        }
        return values;
    }

    @Test
    void theRawResponseOfAKeyListingHoldsNoSecret() {
        final HttpResponse<String> listed = eddy.request(BOOTSTRAP_KEY, "GET", "/api/personal_api_keys/", null);

        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(listed.body()).doesNotContain(BOOTSTRAP_KEY, ApiKeys.hash(BOOTSTRAP_KEY)).contains(ApiKeys.mask(BOOTSTRAP_KEY));
    }
}
