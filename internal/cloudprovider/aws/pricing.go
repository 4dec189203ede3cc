package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// spotPrices are the current spot prices in dollars per hour, by instance type and zone.
type spotPrices map[string]map[string]float64

// onDemandPrices are the on-demand prices in dollars per hour, by instance type.
type onDemandPrices map[string]float64

// spotProducts are the product descriptions of Linux spot prices: EC2-Classic's and the
// VPC's, which EC2 lists apart in some regions and accounts.
var spotProducts = []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"}

// describeSpotPrices reads the current spot price of every instance type in every zone:
// DescribeSpotPriceHistory with a start time of now answers with the price in force
// now; where it lists more than one, the latest wins.
func describeSpotPrices(ctx context.Context, client ec2.DescribeSpotPriceHistoryAPIClient, now time.Time) (spotPrices, error) {
	pages := ec2.NewDescribeSpotPriceHistoryPaginator(client, &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: spotProducts,
		StartTime:           aws.Time(now),
		MaxResults:          aws.Int32(1000),
	})
	prices := spotPrices{}
	at := map[[2]string]time.Time{}
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, entry := range page.SpotPriceHistory {
			price, err := strconv.ParseFloat(aws.ToString(entry.SpotPrice), 64)
			typeName, zone := string(entry.InstanceType), aws.ToString(entry.AvailabilityZone)
			if err != nil || price <= 0 || typeName == "" || zone == "" {
				continue
			}
			key, stamp := [2]string{typeName, zone}, aws.ToTime(entry.Timestamp)
			if last, seen := at[key]; seen && last.After(stamp) {
				continue
			}
			at[key] = stamp
			if prices[typeName] == nil {
				prices[typeName] = map[string]float64{}
			}
			prices[typeName][zone] = price
		}
	}
	return prices, nil
}

// onDemandFilters select the hourly on-demand price of a Linux instance on shared
// hardware without licensed software, in one region; capacitystatus Used leaves out
// the prices of unused reservations.
func onDemandFilters(region string) []pricingtypes.Filter {
	match := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
	}
	return []pricingtypes.Filter{
		match("regionCode", region),
		match("productFamily", "Compute Instance"),
		match("operatingSystem", "Linux"),
		match("tenancy", "Shared"),
		match("preInstalledSw", "NA"),
		match("capacitystatus", "Used"),
	}
}

// getOnDemandPrices reads the on-demand prices of the region's instance types from the
// Pricing API.
func getOnDemandPrices(ctx context.Context, client pricing.GetProductsAPIClient, region string) (onDemandPrices, error) {
	pages := pricing.NewGetProductsPaginator(client, &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"),
		Filters:     onDemandFilters(region),
		MaxResults:  aws.Int32(100),
	})
	prices := onDemandPrices{}
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, doc := range page.PriceList {
			typeName, price, err := parsePriceListItem(doc)
			if err != nil {
				return nil, err
			}
			if typeName != "" && price > 0 {
				prices[typeName] = price
			}
		}
	}
	if len(prices) == 0 {
		return nil, fmt.Errorf("the Pricing API lists no on-demand prices for %s", region)
	}
	return prices, nil
}

// priceListItem is the part of a Pricing API product document that holds an instance
// type's on-demand price: terms.OnDemand.<offer>.priceDimensions.<rate>.pricePerUnit.USD.
type priceListItem struct {
	Product struct {
		Attributes struct {
			InstanceType string `json:"instanceType"`
		} `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// parsePriceListItem reads the instance type and its hourly on-demand price in dollars
// from one product document; a price of 0 means the document holds none.
func parsePriceListItem(doc string) (string, float64, error) {
	var item priceListItem
	if err := json.Unmarshal([]byte(doc), &item); err != nil {
		return "", 0, fmt.Errorf("reading a Pricing API product: %w", err)
	}
	for _, offer := range item.Terms.OnDemand {
		for _, dimension := range offer.PriceDimensions {
			usd, ok := dimension.PricePerUnit["USD"]
			if !ok || dimension.Unit != "Hrs" {
				continue
			}
			price, err := strconv.ParseFloat(usd, 64)
			if err != nil {
				return "", 0, fmt.Errorf("reading the price of %s: %w", item.Product.Attributes.InstanceType, err)
			}
			if price > 0 {
				return item.Product.Attributes.InstanceType, price, nil
			}
		}
	}
	return item.Product.Attributes.InstanceType, 0, nil
}

// errNoPricingClient is the on-demand prices' load error without a Pricing client.
var errNoPricingClient = errors.New("no Pricing API client")
