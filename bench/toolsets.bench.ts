export { benchmarks } from "../server/toolset-examples/binding-overhead";
