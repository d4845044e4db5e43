// Client matrix (SVC-4 / SVC-4b): ai-sdk@6. Its own file, so its library loads (or fails to) on its own; docs/CLIENTS.md.
import { clientSuite } from '../../harness/clients/suite.ts';

clientSuite('ai-sdk@6');
