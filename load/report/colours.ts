// Colours the load report's charts share, wherever they are drawn (uPlot in the page, SVG on the server).
/** An SLO's line and label: a colour no series uses. */
export const SLO_COLOR = '#c2185b';
