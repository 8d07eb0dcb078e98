package dev.eddy.gateway.insights;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.eddy.serde.Json;
import org.junit.jupiter.api.Test;

/** What a saved insight's filters or query mean to Eddy's engine: PostHog's query schema in legacy filter names. */
class QueryTranslationTest {

    @Test
    void aTrendsQueryBecomesTheLegacyTrendFilter() {
        final InsightCalculation c = InsightCalculation.of(null, json("{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"TrendsQuery\","
                + "\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\",\"name\":\"$pageview\",\"custom_name\":\"Views\","
                + "\"math\":\"dau\",\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\",\"type\":\"event\"}]},"
                + "{\"kind\":\"EventsNode\",\"event\":null,\"math\":\"sum\",\"math_property\":\"price\"}],"
                + "\"dateRange\":{\"date_from\":\"-14d\",\"date_to\":\"-1d\",\"explicitDate\":false},\"interval\":\"week\","
                + "\"properties\":{\"type\":\"AND\",\"values\":[{\"type\":\"AND\",\"values\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}]},"
                + "\"filterTestAccounts\":true,\"breakdownFilter\":{\"breakdown\":\"$os\",\"breakdown_type\":\"event\",\"breakdown_limit\":5},"
                + "\"trendsFilter\":{\"display\":\"ActionsTable\",\"formula\":\"A/B\",\"showLegend\":true},"
                + "\"compareFilter\":{\"compare\":true,\"compare_to\":\"-1w\"},\"samplingFactor\":null}}"));

        assertThat(c.kind()).isEqualTo(InsightCalculation.Kind.TREND);
        assertThat(c.filter()).isEqualTo(json("{\"insight\":\"TRENDS\",\"events\":["
                + "{\"id\":\"$pageview\",\"type\":\"events\",\"order\":0,\"custom_name\":\"Views\",\"name\":\"$pageview\",\"math\":\"dau\","
                + "\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\",\"type\":\"event\"}]},"
                + "{\"id\":null,\"type\":\"events\",\"order\":1,\"math\":\"sum\",\"math_property\":\"price\"}],"
                + "\"date_from\":\"-14d\",\"date_to\":\"-1d\",\"interval\":\"week\","
                + "\"properties\":{\"type\":\"AND\",\"values\":[{\"type\":\"AND\",\"values\":[{\"key\":\"plan\",\"value\":\"pro\",\"type\":\"person\"}]}]},"
                + "\"filter_test_accounts\":true,\"breakdown\":\"$os\",\"breakdown_type\":\"event\",\"breakdown_limit\":5,"
                + "\"display\":\"ActionsTable\",\"formula\":\"A/B\",\"compare\":true,\"compare_to\":\"-1w\"}"));
        assertThat(c.interval()).isEqualTo("week");
    }

    @Test
    void aFunnelsQueryBecomesTheLegacyFunnelFilter() {
        final InsightCalculation c = InsightCalculation.of(json("{\"insight\":\"TRENDS\",\"events\":[{\"id\":\"ignored\"}]}"),
                json("{\"kind\":\"FunnelsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"signed up\"},"
                        + "{\"kind\":\"EventsNode\",\"event\":\"paid\",\"custom_name\":\"Paid\"}],\"dateRange\":{\"date_from\":\"2021-05-01\"},"
                        + "\"funnelsFilter\":{\"funnelOrderType\":\"strict\",\"funnelVizType\":\"steps\",\"funnelWindowInterval\":90,"
                        + "\"funnelWindowIntervalUnit\":\"minute\",\"breakdownAttributionType\":\"first_touch\","
                        + "\"exclusions\":[{\"kind\":\"EventsNode\",\"event\":\"x\",\"funnelFromStep\":0,\"funnelToStep\":1}],"
                        + "\"layout\":\"vertical\"}}"));

        assertThat(c.kind()).as("the query wins over the filters").isEqualTo(InsightCalculation.Kind.FUNNEL);
        assertThat(c.filter()).isEqualTo(json("{\"insight\":\"FUNNELS\",\"events\":[{\"id\":\"signed up\",\"type\":\"events\",\"order\":0},"
                + "{\"id\":\"paid\",\"type\":\"events\",\"order\":1,\"custom_name\":\"Paid\"}],\"date_from\":\"2021-05-01\","
                + "\"funnel_order_type\":\"strict\",\"funnel_viz_type\":\"steps\",\"funnel_window_interval\":90,"
                + "\"funnel_window_interval_unit\":\"minute\",\"breakdown_attribution_type\":\"first_touch\","
                + "\"exclusions\":[{\"id\":\"x\",\"type\":\"events\",\"funnel_from_step\":0,\"funnel_to_step\":1}]}"));
    }

    @Test
    void legacyFiltersAreUsedAsTheyAreAndATrendByDefault() {
        assertThat(InsightCalculation.of(json("{\"events\":[{\"id\":\"a\"}]}"), null).kind()).isEqualTo(InsightCalculation.Kind.TREND);
        assertThat(InsightCalculation.of(json("{\"insight\":\"funnels\",\"events\":[]}"), json("{}")).kind())
                .isEqualTo(InsightCalculation.Kind.FUNNEL);
        assertThat(InsightCalculation.of(json("{}"), null).kind()).as("nothing defined yet").isEqualTo(InsightCalculation.Kind.NOTHING);
        assertThat(InsightCalculation.of(null, null).kind()).isEqualTo(InsightCalculation.Kind.NOTHING);
    }

    @Test
    void stickinessIsAStickinessQueryALegacyInsightOrATrendShownAsStickiness() {
        final InsightCalculation query = InsightCalculation.of(null, json("{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"StickinessQuery\","
                + "\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\",\"math\":\"dau\"}],\"interval\":\"week\","
                + "\"dateRange\":{\"date_from\":\"-30d\"},\"compareFilter\":{\"compare\":true},\"stickinessFilter\":{\"computedAs\":\"cumulative\"},"
                + "\"breakdownFilter\":{\"breakdown\":\"$browser\"}}}"));
        assertThat(query.kind()).isEqualTo(InsightCalculation.Kind.STICKINESS);
        assertThat(query.filter().get("insight").asText()).isEqualTo("STICKINESS");
        assertThat(query.filter().get("computed_as").asText()).isEqualTo("cumulative");
        assertThat(query.filter().get("compare").asBoolean()).isTrue();
        assertThat(query.filter().get("interval").asText()).isEqualTo("week");
        assertThat(query.filter().has("breakdown")).as("stickiness has no breakdown").isFalse();
        assertThat(query.filter().get("events").get(0).get("id").asText()).isEqualTo("$pageview");
        assertThat(InsightCalculation.of(json("{\"insight\":\"STICKINESS\",\"events\":[{\"id\":\"a\"}]}"), null).kind())
                .isEqualTo(InsightCalculation.Kind.STICKINESS);
        assertThat(InsightCalculation.of(json("{\"insight\":\"TRENDS\",\"shown_as\":\"Stickiness\",\"events\":[{\"id\":\"a\"}]}"), null).kind())
                .isEqualTo(InsightCalculation.Kind.STICKINESS);
    }

    @Test
    void aLifecycleIsALifecycleQueryALegacyInsightOrATrendShownAsLifecycle() {
        final InsightCalculation query = InsightCalculation.of(null, json("{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"LifecycleQuery\","
                + "\"series\":[{\"kind\":\"EventsNode\",\"event\":\"$pageview\"}],\"interval\":\"week\",\"filterTestAccounts\":true,"
                + "\"dateRange\":{\"date_from\":\"-30d\"},\"lifecycleFilter\":{\"toggledLifecycles\":[\"new\",\"dormant\"]}}}"));
        assertThat(query.kind()).isEqualTo(InsightCalculation.Kind.LIFECYCLE);
        assertThat(query.filter().get("insight").asText()).isEqualTo("LIFECYCLE");
        assertThat(query.filter().get("interval").asText()).isEqualTo("week");
        assertThat(query.filter().get("date_from").asText()).isEqualTo("-30d");
        assertThat(query.filter().get("filter_test_accounts").asBoolean()).isTrue();
        assertThat(query.filter().get("events").get(0).get("id").asText()).isEqualTo("$pageview");
        assertThat(InsightCalculation.of(json("{\"insight\":\"LIFECYCLE\",\"events\":[{\"id\":\"a\"}]}"), null).kind())
                .isEqualTo(InsightCalculation.Kind.LIFECYCLE);
        assertThat(InsightCalculation.of(json("{\"insight\":\"TRENDS\",\"shown_as\":\"Lifecycle\",\"events\":[{\"id\":\"a\"}]}"), null).kind())
                .isEqualTo(InsightCalculation.Kind.LIFECYCLE);
    }

    @Test
    void aRetentionQueryIsTheLegacyRetentionFilterWithPageviewsReturningByDefault() {
        final InsightCalculation query = InsightCalculation.of(null, json("{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"RetentionQuery\","
                + "\"dateRange\":{\"date_from\":\"-7d\",\"date_to\":\"2020-01-15\"},\"filterTestAccounts\":true,"
                + "\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\"}],\"breakdownFilter\":{\"breakdown\":\"plan\",\"breakdown_type\":\"person\"},"
                + "\"retentionFilter\":{\"period\":\"Week\",\"totalIntervals\":5,\"retentionType\":\"retention_first_time\",\"cumulative\":true,"
                + "\"retentionReference\":\"previous\",\"targetEntity\":{\"id\":\"signed up\",\"type\":\"events\",\"name\":\"signed up\","
                + "\"properties\":[{\"key\":\"x\",\"value\":1}]}}}}"));
        assertThat(query.kind()).isEqualTo(InsightCalculation.Kind.RETENTION);
        assertThat(query.interval()).isEqualTo("week");
        assertThat(query.filter()).isEqualTo(json("{\"insight\":\"RETENTION\",\"target_entity\":{\"id\":\"signed up\",\"type\":\"events\","
                + "\"properties\":[{\"key\":\"x\",\"value\":1}]},\"returning_entity\":{\"id\":\"$pageview\",\"type\":\"events\"},"
                + "\"period\":\"Week\",\"total_intervals\":5,\"retention_type\":\"retention_first_time\",\"cumulative\":true,\"date_to\":\"2020-01-15\","
                + "\"properties\":[{\"key\":\"$browser\",\"value\":\"Chrome\"}],\"filter_test_accounts\":true,\"breakdown\":\"plan\","
                + "\"breakdown_type\":\"person\"}"));
        assertThat(InsightCalculation.of(json("{\"insight\":\"RETENTION\",\"period\":\"Month\"}"), null).kind())
                .isEqualTo(InsightCalculation.Kind.RETENTION);
        assertThat(InsightCalculation.of(null, json("{\"kind\":\"RetentionQuery\",\"retentionFilter\":{\"targetEntity\":{\"id\":3,"
                + "\"type\":\"actions\",\"name\":\"signed up\"}}}")).filter().get("target_entity").toString()).isEqualTo("{\"id\":3,\"type\":\"actions\"}");
        assertThat(problem("{\"kind\":\"RetentionQuery\",\"retentionFilter\":{\"minimumOccurrences\":3}}"))
                .isEqualTo("minimumOccurrences is not supported by Eddy yet");
    }

    @Test
    void aPathsQueryIsTheLegacyPathsFilter() {
        final InsightCalculation paths = InsightCalculation.of(null, json("{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"PathsQuery\","
                + "\"pathsFilter\":{\"includeEventTypes\":[\"$pageview\"],\"startPoint\":\"/\",\"stepLimit\":4,\"edgeLimit\":20,"
                + "\"pathGroupings\":[\"/blog/*\"]},\"dateRange\":{\"date_from\":\"-14d\"},\"filterTestAccounts\":true}}"));
        assertThat(paths.kind()).isEqualTo(InsightCalculation.Kind.PATHS);
        assertThat(paths.filter()).isEqualTo(json("{\"insight\":\"PATHS\",\"include_event_types\":[\"$pageview\"],\"start_point\":\"/\","
                + "\"step_limit\":4,\"edge_limit\":20,\"path_groupings\":[\"/blog/*\"],\"date_from\":\"-14d\",\"filter_test_accounts\":true}"));
        assertThat(InsightCalculation.of(json("{\"insight\":\"PATHS\"}"), null).kind()).isEqualTo(InsightCalculation.Kind.PATHS);
        assertThat(problem("{\"kind\":\"PathsQuery\",\"funnelPathsFilter\":{\"funnelStep\":2}}")).contains("funnel paths");
    }

    @Test
    void otherInsightKindsAreUnsupportedWithAReason() {
        assertThat(InsightCalculation.of(null, json("{\"kind\":\"InsightVizNode\",\"source\":{\"kind\":\"SessionsQuery\"}}")).problem())
                .isEqualTo("Insights of kind SessionsQuery are not supported by Eddy yet.");
        final InsightCalculation sql = InsightCalculation.of(null, json("{\"kind\":\"DataVisualizationNode\","
                + "\"source\":{\"kind\":\"HogQLQuery\",\"query\":\"select 1\"}}"));
        assertThat(sql.kind()).isEqualTo(InsightCalculation.Kind.UNSUPPORTED);
        assertThat(sql.problem()).isEqualTo("SQL (HogQL) insights are not supported by Eddy yet.");
        assertThat(InsightCalculation.of(json("{\"insight\":\"BOGUS\"}"), null).problem()).isEqualTo("Unknown insight type 'BOGUS'.");
    }

    @Test
    void smoothingIsTranslatedAndOptionsTheEngineWouldIgnoreAreRefused() {
        final InsightCalculation smoothed = InsightCalculation.of(null, json("{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\","
                + "\"event\":\"a\"}],\"trendsFilter\":{\"smoothingIntervals\":7,\"showLegend\":true}}"));
        assertThat(smoothed.filter().get("smoothing_intervals").asInt()).isEqualTo(7);
        assertThat(problem("{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"a\",\"math\":\"sum\","
                + "\"math_property\":\"x\",\"math_multiplier\":100}]}")).isEqualTo("math_multiplier is not supported by Eddy yet");
        assertThat(problem("{\"kind\":\"FunnelsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"a\"},{\"kind\":\"EventsNode\","
                + "\"event\":\"b\",\"optionalInFunnel\":true}]}")).contains("optionalInFunnel");
    }

    @Test
    void actionsNodesAreTheLegacyActionsListInTheirPlace() {
        final InsightCalculation trend = InsightCalculation.of(null, json("{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\","
                + "\"event\":\"a\"},{\"kind\":\"ActionsNode\",\"id\":3,\"math\":\"dau\"}]}"));
        assertThat(trend.filter().get("events").toString()).isEqualTo("[{\"id\":\"a\",\"type\":\"events\",\"order\":0}]");
        assertThat(trend.filter().get("actions").toString()).isEqualTo("[{\"id\":3,\"type\":\"actions\",\"order\":1,\"math\":\"dau\"}]");
        final InsightCalculation funnel = InsightCalculation.of(null, json("{\"kind\":\"FunnelsQuery\",\"series\":[{\"kind\":\"ActionsNode\",\"id\":3},"
                + "{\"kind\":\"EventsNode\",\"event\":\"b\"}],\"funnelsFilter\":{\"exclusions\":[{\"kind\":\"ActionsNode\",\"id\":4,"
                + "\"funnelFromStep\":0,\"funnelToStep\":1}]}}"));
        assertThat(funnel.filter().get("exclusions").get(0).get("type").asText()).isEqualTo("actions");
        assertThat(funnel.filter().get("actions").get(0).get("order").asInt()).isZero();
    }

    @Test
    void whatTheEngineWouldIgnoreIsRefusedByName() {
        assertThat(problem("{\"kind\":\"TrendsQuery\",\"series\":[],\"aggregation_group_type_index\":0}"))
                .startsWith("aggregation_group_type_index is not supported in trends");
        assertThat(problem("{\"kind\":\"TrendsQuery\",\"series\":[],\"trendsFilter\":{\"formulaNodes\":[{\"formula\":\"A\"},{\"formula\":\"B\"}]}}"))
                .isEqualTo("several formulas are not supported by Eddy yet");
        assertThat(problem("{\"kind\":\"TrendsQuery\",\"series\":[],\"breakdownFilter\":{\"breakdown\":\"a\",\"breakdowns\":[{\"property\":\"b\"}]}}"))
                .isEqualTo("a query is broken down by breakdown or by breakdowns, not both");
        assertThat(problem("{\"kind\":\"FunnelsQuery\",\"series\":[],\"breakdownFilter\":{\"breakdowns\":[{\"property\":\"a\"},{\"property\":\"b\"}]}}"))
                .startsWith("funnels break down by several properties");
        final JsonNode several = InsightCalculation.of(null, json("{\"kind\":\"TrendsQuery\",\"series\":[],\"breakdownFilter\":"
                + "{\"breakdowns\":[{\"property\":\"a\"},{\"property\":\"b\",\"type\":\"person\"}]}}")).filter();
        assertThat(several.get("breakdowns").toString()).isEqualTo("[{\"property\":\"a\"},{\"property\":\"b\",\"type\":\"person\"}]");
        assertThat(problem("{\"kind\":\"FunnelsQuery\",\"series\":\"x\"}")).isEqualTo("series must be a list");
    }

    @Test
    void oneFormulaNodeAndOneBreakdownOfTheNewSchemaAreTheLegacyOnes() {
        final JsonNode filter = InsightCalculation.of(null, json("{\"kind\":\"TrendsQuery\",\"series\":[{\"kind\":\"EventsNode\",\"event\":\"a\"}],"
                + "\"trendsFilter\":{\"formulaNodes\":[{\"formula\":\"A*2\",\"custom_name\":\"double\"}]},"
                + "\"breakdownFilter\":{\"breakdowns\":[{\"property\":\"plan\",\"type\":\"person\"}]}}")).filter();
        assertThat(filter.get("formula").asText()).isEqualTo("A*2");
        assertThat(filter.get("breakdown").asText()).isEqualTo("plan");
        assertThat(filter.get("breakdown_type").asText()).isEqualTo("person");
    }

    private static String problem(final String query) {
        final InsightCalculation c = InsightCalculation.of(null, json(query));
        assertThat(c.kind()).isEqualTo(InsightCalculation.Kind.INVALID);
        return c.problem();
    }

    static JsonNode json(final String text) {
        try {
            return Json.mapper().readTree(text);
        } catch (final java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
