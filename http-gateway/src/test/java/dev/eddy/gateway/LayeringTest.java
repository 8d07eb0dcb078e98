package dev.eddy.gateway;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layers as built: the gateway (HTTP, PostgreSQL, routing between instances) reads the streams instances' state
 * only through the query engine ({@code dev.eddy.query}: partial reads and key lookups), and knows no RocksDB or Kafka
 * Streams type; the engine knows no HTTP; the topology knows neither; neither the modules' top packages nor the
 * gateway's packages depend on each other in a cycle (a feature's package may use another's, never back: cohorts
 * learn which flags use them through {@code CohortUsers}, remote config whether flags exist through a function).
 * Checked on the compiled classes of every module.
 */
class LayeringTest {
    private static final String GATEWAY = "dev.eddy.gateway..";
    private static final String ENGINE = "dev.eddy.query..";
    private static final String TOPOLOGY = "dev.eddy.topology..";
    private static JavaClasses eddy;

    @BeforeAll
    static void importClasses() {
        eddy = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("dev.eddy");
    }

    /** The gateway's rule: no store, store type, store iterator or Streams client in its classes. */
    private static ArchRule gatewayKnowsNoStores() {
        return noClasses().that().resideInAPackage(GATEWAY)
                .should().dependOnClassesThat().resideInAnyPackage("org.apache.kafka.streams..", "org.rocksdb..")
                .because("the gateway reads state through the query engine (dev.eddy.query), whose storage may change");
    }

    @Test
    void theGatewayKnowsNoKafkaStreamsOrRocksDbType() {
        gatewayKnowsNoStores().check(eddy);
    }

    @Test
    void theRuleSeesAGatewayClassThatReadsAStore() {
        // The rule is not vacuous: a gateway class holding a store handle breaks it.
        final JavaClasses offending = new ClassFileImporter().importClasses(StoreHoldingGatewayClass.class);
        assertThatThrownBy(() -> gatewayKnowsNoStores().check(offending)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("ReadOnlyKeyValueStore");
    }

    @Test
    void theModulesTopPackagesFormNoCycle() {
        com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices().matching("dev.eddy.(*)..")
                .should().beFreeOfCycles().check(eddy);
    }

    @Test
    void theGatewaysPackagesFormNoCycle() {
        com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices().matching("dev.eddy.gateway.(*)..")
                .should().beFreeOfCycles().check(eddy);
    }

    @Test
    void theEngineKnowsNoHttpAndNoGateway() {
        noClasses().that().resideInAPackage(ENGINE)
                .should().dependOnClassesThat().resideInAnyPackage(GATEWAY, "io.vertx..")
                .check(eddy);
    }

    @Test
    void theTopologyAndTheStoresKnowNeitherTheEngineNorTheGateway() {
        noClasses().that().resideInAnyPackage(TOPOLOGY, "dev.eddy.columns..", "dev.eddy.trends..", "dev.eddy.funnels..",
                        "dev.eddy.persons..", "dev.eddy.flags..", "dev.eddy.stores..")
                .should().dependOnClassesThat().resideInAnyPackage(ENGINE, GATEWAY)
                .check(eddy);
    }

    @Test
    void everyPartialReadTheGatewayRegistersComesFromTheEngine() {
        classes().that().implement(dev.eddy.query.PartitionRead.class)
                .should().resideInAPackage(ENGINE)
                .check(eddy);
        assertThat(eddy.containPackage("dev.eddy.query.insights")).isTrue();
    }

    /** Stands for a gateway class that reads a store itself (in the gateway's package, as the rule sees it). */
    @SuppressWarnings("unused")
    static final class StoreHoldingGatewayClass {
        private org.apache.kafka.streams.state.ReadOnlyKeyValueStore<String, String> store;
    }
}
