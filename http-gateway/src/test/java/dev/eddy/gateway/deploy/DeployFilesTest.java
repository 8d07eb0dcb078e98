package dev.eddy.gateway.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.eddy.config.ConfigLoader;
import dev.eddy.config.EddyConfig;
import dev.eddy.config.Role;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code deploy/} ships, checked as the tools that read it would: the Kubernetes manifests field by field against
 * Kubernetes' API types (fabric8's model: a field the API does not have is refused, as {@code kubectl --validate=strict}
 * refuses it), their selectors, probes and ports wired to each other and to Eddy's routes, every {@code EDDY_}
 * variable and {@code eddy.conf} accepted by Eddy's own configuration; the Prometheus rules and the Grafana dashboard
 * in the shape their loaders take. {@code CaptureToQueryIT} checks that every metric they name is served.
 */
class DeployFilesTest {
    private static final Path DEPLOY = Path.of("..", "deploy");
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final ObjectMapper STRICT = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    private static final Map<String, Class<? extends HasMetadata>> KINDS = Map.of("Deployment", Deployment.class, "StatefulSet",
            StatefulSet.class, "Service", Service.class, "ConfigMap", ConfigMap.class, "Secret", Secret.class, "PodDisruptionBudget",
            PodDisruptionBudget.class);
    private static final Set<String> HEALTH_ROUTES = Set.of("/_health/live", "/_health/ready");

    /** Every document of a manifest file, typed. */
    private static List<HasMetadata> resources(final Path file) throws IOException {
        final List<HasMetadata> typed = new ArrayList<>();
        for (final JsonNode doc : YAML.readerFor(JsonNode.class).<JsonNode>readValues(Files.readString(file)).readAll()) {
            final Class<? extends HasMetadata> type = KINDS.get(doc.path("kind").asText());
            assertThat(type).as(file + ": a kind the manifests use, " + doc.path("kind")).isNotNull();
            final HasMetadata resource = STRICT.treeToValue(doc, type);
            strict(resource, file + " " + resource.getKind() + "/" + resource.getMetadata().getName(), new IdentityHashMap<>());
            typed.add(resource);
        }
        return typed;
    }

    /**
     * Fails on a field Kubernetes' types do not have: fabric8's model keeps those in {@code additionalProperties}
     * instead of refusing them, so every object of the model reached from {@code value} is looked into.
     */
    private static void strict(final Object value, final String path, final IdentityHashMap<Object, Boolean> seen) {
        if (value == null || seen.put(value, true) != null) {
            return;
        }
        if (value instanceof Collection<?> items) {
            int i = 0;
            for (final Object item : items) {
                strict(item, path + "[" + i++ + "]", seen);
            }
            return;
        }
        if (value instanceof Map<?, ?> map) {
            map.forEach((k, v) -> strict(v, path + "." + k, seen));
            return;
        }
        if (!value.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (final Method getter : value.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || !getter.getName().startsWith("get") || getter.getDeclaringClass() == Object.class) {
                continue;
            }
            final Object child;
            try {
                child = getter.invoke(value);
            } catch (final ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
            if ("getAdditionalProperties".equals(getter.getName())) {
                assertThat((Map<?, ?>) child).as(path + ": fields Kubernetes does not know").isNullOrEmpty();
            } else {
                strict(child, path + "." + getter.getName().substring(3, 4).toLowerCase(java.util.Locale.ROOT) + getter.getName().substring(4), seen);
            }
        }
    }

    private static List<HasMetadata> kustomized() throws IOException {
        final JsonNode kustomization = YAML.readTree(DEPLOY.resolve("kubernetes/kustomization.yaml").toFile());
        final List<HasMetadata> all = new ArrayList<>();
        for (final JsonNode resource : kustomization.get("resources")) {
            all.addAll(resources(DEPLOY.resolve("kubernetes").resolve(resource.asText())));
        }
        return all;
    }

    @SuppressWarnings("unchecked")
    private static <T extends HasMetadata> List<T> ofKind(final List<HasMetadata> all, final Class<T> type) {
        return (List<T>) all.stream().filter(type::isInstance).toList();
    }

    @Test
    void theManifestsAreKubernetesOwnTypesWiredToEachOther() throws IOException {
        final List<HasMetadata> all = kustomized();
        final List<Deployment> deployments = ofKind(all, Deployment.class);
        final List<StatefulSet> statefulSets = ofKind(all, StatefulSet.class);
        assertThat(deployments).extracting(d -> d.getMetadata().getName()).containsExactly("eddy-gateway");
        assertThat(statefulSets).extracting(s -> s.getMetadata().getName()).containsExactly("eddy-streams");
        final List<PodTemplateSpec> pods = new ArrayList<>();
        for (final Deployment d : deployments) {
            assertThat(d.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(d.getSpec().getSelector().getMatchLabels());
            pods.add(d.getSpec().getTemplate());
        }
        for (final StatefulSet s : statefulSets) {
            assertThat(s.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(s.getSpec().getSelector().getMatchLabels());
            final Service headless = ofKind(all, Service.class).stream().filter(v -> v.getMetadata().getName().equals(s.getSpec().getServiceName()))
                    .findFirst().orElseThrow(() -> new AssertionError("no Service " + s.getSpec().getServiceName()));
            assertThat(headless.getSpec().getClusterIP()).as("a StatefulSet's governing Service is headless").isEqualTo("None");
            assertThat(s.getSpec().getVolumeClaimTemplates()).as("a volume per instance for its state").hasSize(1);
            assertThat(s.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds()).as("time for a clean Streams close")
                    .isGreaterThanOrEqualTo(60L);
            pods.add(s.getSpec().getTemplate());
        }
        for (final Service service : ofKind(all, Service.class)) {
            assertThat(pods).as("Service " + service.getMetadata().getName() + " selects a workload's pods")
                    .anyMatch(p -> p.getMetadata().getLabels().entrySet().containsAll(service.getSpec().getSelector().entrySet()));
        }
        for (final PodDisruptionBudget pdb : ofKind(all, PodDisruptionBudget.class)) {
            assertThat(pods).as("PodDisruptionBudget " + pdb.getMetadata().getName() + " selects a workload's pods").anyMatch(p -> p.getMetadata()
                    .getLabels().entrySet().containsAll(pdb.getSpec().getSelector().getMatchLabels().entrySet()));
        }
        for (final PodTemplateSpec pod : pods) {
            assertThat(pod.getSpec().getEnableServiceLinks()).as("no EDDY_..._SERVICE_HOST variables from Services").isFalse();
            assertThat(pod.getMetadata().getAnnotations()).containsEntry("prometheus.io/scrape", "true").containsEntry("prometheus.io/path", "/metrics");
            assertThat(pod.getSpec().getSecurityContext().getRunAsNonRoot()).isTrue();
            final Container eddy = pod.getSpec().getContainers().get(0);
            Role.parse(eddy.getArgs().get(0));
            assertThat(eddy.getPorts()).anyMatch(p -> "http".equals(p.getName()) && p.getContainerPort() == 8000);
            assertThat(eddy.getPorts()).as("Prometheus scrapes the admin port").anyMatch(p -> "admin".equals(p.getName())
                    && String.valueOf(p.getContainerPort()).equals(pod.getMetadata().getAnnotations().get("prometheus.io/port")));
            for (final Probe probe : List.of(eddy.getStartupProbe(), eddy.getLivenessProbe(), eddy.getReadinessProbe())) {
                assertThat(probe.getHttpGet().getPath()).isIn(HEALTH_ROUTES);
                assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("http");
            }
            assertThat(eddy.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/_health/ready");
        }
    }

    /** Every instance's configuration as Eddy reads it: the ConfigMaps, the example Secret, the container's own variables. */
    @Test
    void everyInstanceStartsWithTheConfigurationItIsGiven(@TempDir final Path dir) throws IOException {
        final List<HasMetadata> all = kustomized();
        final Map<String, String> shared = new HashMap<>();
        ofKind(all, ConfigMap.class).stream().filter(c -> c.getMetadata().getName().equals("eddy-env")).forEach(c -> shared.putAll(c.getData()));
        ofKind(resources(DEPLOY.resolve("kubernetes/secret.example.yaml")), Secret.class).forEach(s -> shared.putAll(s.getStringData()));
        final String conf = ofKind(all, ConfigMap.class).stream().filter(c -> c.getMetadata().getName().equals("eddy-conf")).findFirst()
                .orElseThrow().getData().get("eddy.conf");
        final Path file = dir.resolve("eddy.conf");
        Files.writeString(file, conf);
        final List<PodTemplateSpec> pods = new ArrayList<>();
        ofKind(all, Deployment.class).forEach(d -> pods.add(d.getSpec().getTemplate()));
        ofKind(all, StatefulSet.class).forEach(s -> pods.add(s.getSpec().getTemplate()));
        for (final PodTemplateSpec pod : pods) {
            final Container eddy = pod.getSpec().getContainers().get(0);
            final Map<String, String> env = new HashMap<>(shared);
            for (final EnvVar variable : eddy.getEnv()) {
                env.put(variable.getName(), variable.getValue() == null ? "from-the-downward-api" : variable.getValue());
            }
            env.put("EDDY_CONFIG", file.toString());
            final EddyConfig config = ConfigLoader.load(env, Optional.empty()).withRole(Role.parse(eddy.getArgs().get(0)));
            assertThat(config.kafka().replicationFactor()).isEqualTo((short) 3);
            assertThat(config.kafka().minInSyncReplicas()).isEqualTo(2);
            assertThat(config.kafka().clientProperties()).containsEntry("security.protocol", "SASL_SSL").containsKey("sasl.jaas.config");
            assertThat(eddy.getPorts()).as("the admin port Eddy is given is the container's").anyMatch(p -> "admin".equals(p.getName())
                    && p.getContainerPort() == config.http().adminPort());
            assertThat(config.http().drainDelay().plus(config.http().drainTimeout()).toSeconds())
                    .as("draining leaves most of the grace period to close Kafka Streams and the producer")
                    .isLessThanOrEqualTo(pod.getSpec().getTerminationGracePeriodSeconds() / 2);
            if (config.role() == Role.STREAMS) {
                assertThat(config.http().advertisedHost()).startsWith("$(POD_NAME).eddy-streams.");
                final String mounted = eddy.getVolumeMounts().stream().filter(m -> m.getName().equals("state")).findFirst().orElseThrow().getMountPath();
                assertThat(config.streams().stateDir().toString()).startsWith(mounted);
            }
        }
    }

    @Test
    void theAlertRulesAreInPrometheusShape() throws IOException {
        final JsonNode rules = YAML.readTree(DEPLOY.resolve("prometheus/eddy-alerts.yaml").toFile());
        assertThat(rules.get("groups")).isNotEmpty();
        final Set<String> names = new java.util.HashSet<>();
        for (final JsonNode group : rules.get("groups")) {
            assertThat(group.path("name").asText()).isNotBlank();
            for (final JsonNode rule : group.get("rules")) {
                final String alert = rule.path("alert").asText();
                assertThat(alert).matches("[A-Z][A-Za-z]+");
                assertThat(names.add(alert)).as("one rule named " + alert).isTrue();
                assertThat(rule.path("expr").asText()).as(alert).isNotBlank();
                balanced(rule.path("expr").asText(), alert);
                if (rule.has("for")) {
                    assertThat(rule.get("for").asText()).as(alert).matches("\\d+[smh]");
                }
                assertThat(rule.path("labels").path("severity").asText()).as(alert).isIn("critical", "warning", "info");
                assertThat(rule.path("annotations").path("summary").asText()).as(alert).isNotBlank();
                rule.fieldNames().forEachRemaining(f -> assertThat(f).as(alert + "'s fields").isIn("alert", "expr", "for", "labels", "annotations"));
            }
        }
        assertThat(names).contains("EddyStreamsLagGrowing", "EddyStreamsNotRunning", "EddyDeadLetters", "EddyCaptureUnavailable");
    }

    @Test
    void theDashboardIsInGrafanasShape() throws IOException {
        final JsonNode dashboard = new ObjectMapper().readTree(DEPLOY.resolve("grafana/eddy-dashboard.json").toFile());
        assertThat(dashboard.path("title").asText()).isEqualTo("Eddy");
        assertThat(dashboard.path("uid").asText()).matches("[a-z0-9-]{1,40}");
        final Set<Integer> ids = new java.util.HashSet<>();
        for (final JsonNode panel : dashboard.get("panels")) {
            assertThat(ids.add(panel.path("id").asInt())).as("unique panel ids").isTrue();
            assertThat(panel.path("title").asText()).isNotBlank();
            for (final String field : List.of("h", "w", "x", "y")) {
                assertThat(panel.path("gridPos").path(field).isInt()).as(panel.path("title") + " gridPos." + field).isTrue();
            }
            assertThat(panel.path("gridPos").path("x").asInt() + panel.path("gridPos").path("w").asInt()).isLessThanOrEqualTo(24);
            assertThat(panel.get("targets")).as(panel.path("title").asText()).isNotEmpty();
            for (final JsonNode target : panel.get("targets")) {
                assertThat(target.path("expr").asText()).isNotBlank();
                balanced(target.path("expr").asText(), panel.path("title").asText());
                assertThat(target.path("datasource").path("uid").asText()).isEqualTo("${datasource}");
            }
        }
        assertThat(ids).hasSizeGreaterThanOrEqualTo(10);
    }

    /** Brackets of a PromQL expression open and close in order (a typo there is the commonest syntax error). */
    private static void balanced(final String expr, final String where) {
        final java.util.Deque<Character> open = new java.util.ArrayDeque<>();
        boolean quoted = false;
        for (final char c : expr.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            } else if (!quoted && "([{".indexOf(c) >= 0) {
                open.push(c);
            } else if (!quoted && ")]}".indexOf(c) >= 0) {
                if (open.isEmpty() || "([{".indexOf(open.pop()) != ")]}".indexOf(c)) {
                    fail(where + ": unbalanced " + c + " in " + expr);
                }
            }
        }
        assertThat(open).as(where + ": unclosed brackets in " + expr).isEmpty();
        assertThat(quoted).as(where + ": unclosed quote in " + expr).isFalse();
    }
}
