# The manager image: `docker build -t <registry>/mpool:<tag> .`
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/mpool ./cmd/mpool

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/mpool /mpool
USER 65532:65532
ENTRYPOINT ["/mpool"]
