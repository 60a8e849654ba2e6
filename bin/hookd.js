#!/usr/bin/env node
import { main } from '../dist/src/daemon/main.js';

await main();
